// `npm run cli -- accounts timezone <account> [ZONE]` against the real Postgres.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { accountTimeSettings } from '../../src/accounts/time-settings.js';
import { runAccountsCli } from '../../src/cli/accounts.js';
import { loadConfig } from '../../src/config/env.js';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { cliRunner } from '../helpers/run-cli.js';

const tag = randomUUID().slice(0, 8);
const cli = cliRunner(runAccountsCli);
let prisma: PrismaClient;
let account: { id: string; email: string };

beforeAll(async () => {
  prisma = createPrismaClient(inject('databaseUrl'));
  account = await prisma.account.create({
    data: { email: `tz-${tag}@example.com`, encryptedTokens: Buffer.from('unused') },
  });
});

afterAll(async () => {
  await prisma.account.delete({ where: { id: account.id } });
  await prisma.$disconnect();
});

describe('accounts timezone', () => {
  it('shows UTC for an account without a zone of its own', async () => {
    const shown = await cli('timezone', account.email);
    expect(shown.code).toBe(0);
    expect(shown.out).toMatch(
      new RegExp(
        `^${account.email} time zone UTC \\(none set: DEFAULT_TIME_ZONE\\); now \\w{3} \\d{1,2} \\w{3} \\d{4} \\d{2}:\\d{2} UTC$`,
      ),
    );
    expect(await accountTimeSettings(prisma, account.id, loadConfig({}))).toEqual({
      zone: 'UTC',
      morningHour: 8,
      eveningHour: 18,
      weekend: [6, 7],
    });
  });

  it('sets a zone in its canonical spelling, by email or id, and the account’s settings use it', async () => {
    const set = await cli('timezone', account.email.toUpperCase(), 'europe/berlin');
    expect(set.code).toBe(0);
    expect(set.out).toMatch(/^Set: tz-.* time zone Europe\/Berlin \(its own\); now .* Europe\/Berlin \(/);
    expect((await prisma.account.findUniqueOrThrow({ where: { id: account.id } })).timeZone).toBe('Europe/Berlin');
    expect((await cli('timezone', account.id)).out).toContain('time zone Europe/Berlin (its own)');
    expect((await accountTimeSettings(prisma, account.id, loadConfig({})))?.zone).toBe('Europe/Berlin');
  });

  it('refuses an unknown zone with a clear error and changes nothing', async () => {
    const refused = await cli('timezone', account.email, 'Mars/Olympus_Mons');
    expect(refused.code).toBe(2);
    expect(refused.out).toMatch(
      /^durable-inbox accounts: unknown time zone "Mars\/Olympus_Mons": expected an IANA name such as Europe\/Berlin/,
    );
    expect((await prisma.account.findUniqueOrThrow({ where: { id: account.id } })).timeZone).toBe('Europe/Berlin');
  });

  it('refuses a missing or unknown account', async () => {
    expect((await cli('timezone')).out).toMatch(/timezone needs one account/);
    const missing = await cli('timezone', `nobody-${tag}@example.com`, 'UTC');
    expect(missing.code).toBe(2);
    expect(missing.out).toMatch(/no account nobody-/);
  });
});
