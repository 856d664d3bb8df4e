// `npm run cli -- rules ...` against the real Postgres: what it stores is what the thread workflow's
// rules step reads (test/thread/lifecycle.test.ts covers that step end to end).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runRulesCli } from '../../src/cli/rules.js';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { cliRunner } from '../helpers/run-cli.js';

const tag = randomUUID().slice(0, 8);
const sender = `billing-${tag}@vendor.example`;
const domain = `partner-${tag}.example`;
let prisma: PrismaClient;
let account: { id: string; email: string };

const cli = cliRunner(runRulesCli);

const ruleRows = () => prisma.rule.findMany({ where: { OR: [{ scopeRef: sender }, { scopeRef: domain }, { scopeRef: account.id }] } });

beforeAll(async () => {
  prisma = createPrismaClient(inject('databaseUrl'));
  account = await prisma.account.create({ data: { email: `rules-${tag}@example.com`, encryptedTokens: Buffer.from('unused') } });
});

afterAll(async () => {
  await prisma.rule.deleteMany({ where: { OR: [{ scopeRef: sender }, { scopeRef: domain }, { scopeRef: account.id }] } });
  await prisma.account.delete({ where: { id: account.id } });
  await prisma.$disconnect();
});

describe('rules cli', () => {
  it('adds a sender rule that decides, shows it, tries it, disables and removes it', async () => {
    const added = await cli('add', '--scope', 'sender', '--ref', sender.toUpperCase(), '--category', 'automated', '--subject', '/^invoice \\d+/');
    expect(added.code, added.out).toBe(0);
    const id = /Added rule (\S+):/.exec(added.out)?.[1];
    expect(id).toBeDefined();
    const [row] = await ruleRows();
    expect(row).toMatchObject({ id, scope: 'sender', scopeRef: sender, kind: 'deterministic', action: 'automated', enabled: true });
    expect(row!.conditions).toEqual({ subject: '/^invoice \\d+/' });

    const listed = await cli('list');
    expect(listed.out).toMatch(new RegExp(`${id}\\s+sender\\s+${sender}\\s+category automated\\s+subject~/\\^invoice`));
    expect(listed.out).toMatch(/builtin:list-unsubscribe\s+global\s+-\s+category newsletter\s+header List-Unsubscribe/);

    const decides = await cli('test', '--from', `Billing <${sender}>`, '--subject', 'Invoice 1042');
    expect(decides.out).toContain(`decided by rule ${id}: automated`);
    const otherSubject = await cli('test', '--from', sender, '--subject', 'Question about the invoice');
    expect(otherSubject.out).toContain('no rule decides: the LLM classifies it');

    expect((await cli('disable', id!)).code).toBe(0);
    expect((await cli('test', '--from', sender, '--subject', 'Invoice 7')).out).toContain('no rule decides');
    expect((await cli('enable', id!)).code).toBe(0);
    expect((await cli('test', '--from', sender, '--subject', 'Invoice 7')).out).toContain(`decided by rule ${id}`);

    expect((await cli('remove', id!)).code).toBe(0);
    expect(await ruleRows()).toHaveLength(0);
  });

  it('adds instruction rules for a domain and an account (by email); test shows what the prompt carries', async () => {
    expect((await cli('add', '--scope', 'domain', '--ref', domain, '--instruction', 'Answer in French.')).code).toBe(0);
    const forAccount = await cli('add', '--scope', 'account', '--ref', account.email, '--instruction', 'Sign as Sam.');
    expect(forAccount.code, forAccount.out).toBe(0);
    expect((await ruleRows()).find((r) => r.scope === 'account')?.scopeRef).toBe(account.id);

    const tried = await cli('test', '--account', account.email, '--from', `Ann <ann@mail.${domain}>`, '--subject', 'Hello');
    expect(tried.out).toContain('no rule decides');
    expect(tried.out).toMatch(/instructions for the LLM:\n\s+- Sign as Sam\.\n\s+- Answer in French\./);

    // For another account, only the domain's instruction applies; list --account leaves the other account's rule out.
    const other = await cli('test', '--from', `ann@${domain}`);
    expect(other.out).not.toContain('Sign as Sam.');
    expect(other.out).toContain('Answer in French.');
    const listed = await cli('list', '--account', account.email);
    expect(listed.out).toMatch(new RegExp(`account\\s+${account.email}\\s+instruction: "Sign as Sam\\."`));
  });

  it('adds follow-up rules (sent mail expects a reply: yes with its own wait, or no) and lists them', async () => {
    const yes = await cli('add', '--scope', 'domain', '--ref', domain, '--expects-reply', 'yes', '--follow-up-days', '5', '--subject', 'contract');
    expect(yes.code, yes.out).toBe(0);
    expect(yes.out).toContain('sent mail expects a reply, follow up after 5 business day(s) when subject~contract');
    const no = await cli('add', '--scope', 'sender', '--ref', sender, '--expects-reply', 'no');
    expect(no.code, no.out).toBe(0);
    const rows = await ruleRows();
    expect(rows.find((r) => r.kind === 'follow_up' && r.scopeRef === domain)).toMatchObject({ kind: 'follow_up', action: 'expects_reply', followUpDays: 5 });
    expect(rows.find((r) => r.kind === 'follow_up' && r.scopeRef === sender)).toMatchObject({ kind: 'follow_up', action: 'no_reply', followUpDays: null });
    const listed = await cli('list');
    expect(listed.out).toMatch(new RegExp(`${domain}\\s+sent mail expects a reply, follow up after 5 business day\\(s\\)\\s+subject~contract`));
    expect(listed.out).toMatch(new RegExp(`${sender}\\s+sent mail expects no reply\\s+\\(all mail in scope\\)`));
    // They decide nothing about classification; `test --sent` tries them.
    expect((await cli('test', '--from', sender, '--subject', 'contract')).out).toContain('no rule decides: the LLM classifies it');
    const yesId = rows.find((r) => r.kind === 'follow_up' && r.scopeRef === domain)!.id;
    expect((await cli('test', '--sent', '--to', `Bo <bo@${domain}>`, '--subject', 'The contract')).out).toContain(
      `decided by rule ${yesId}: expects an answer, follow up after 5 business day(s)`,
    );
    expect((await cli('test', '--sent', '--to', `x@elsewhere.example, ${sender}`)).out).toMatch(/decided by rule .*: expects no answer: no follow-up/);
    expect((await cli('test', '--sent', '--to', `bo@${domain}`, '--subject', 'Lunch')).out).toContain('no follow-up rule decides: the LLM judges');
    await prisma.rule.deleteMany({ where: { kind: 'follow_up', scopeRef: { in: [domain, sender] } } });
  });

  it('refuses bad arguments with a clear reason and exit 2, storing nothing', async () => {
    const before = await ruleRows();
    const cases: Array<[string[], RegExp]> = [
      [['add', '--scope', 'team', '--ref', sender, '--category', 'fyi'], /--scope: expected global, account, domain or sender/],
      [['add', '--scope', 'sender', '--category', 'fyi'], /--ref: global rules take no --ref; account, domain and sender rules need one/],
      [['add', '--scope', 'sender', '--ref', 'not-an-address', '--category', 'fyi'], /--ref: a sender rule needs an address/],
      [['add', '--scope', 'sender', '--ref', sender, '--category', 'spam'], /--category: expected one of needs_response, fyi/],
      [['add', '--scope', 'sender', '--ref', sender], /give exactly one of --category .*, --instruction .* and --expects-reply/],
      [['add', '--scope', 'sender', '--ref', sender, '--category', 'fyi', '--instruction', 'x'], /give exactly one of --category/],
      [['add', '--scope', 'sender', '--ref', sender, '--category', 'fyi', '--subject', '/(unclosed/'], /conditions\.subject: invalid regular expression/],
      [['add', '--scope', 'sender', '--ref', sender, '--category', 'automated', '--actions', 'add_label:TRASH'], /--actions: action 1: add_label: TRASH is a Gmail system label/],
      [['add', '--scope', 'sender', '--ref', sender, '--category', 'automated', '--actions', 'mark_read,remove_label:inbox'], /--actions: action 2: remove_label: inbox is a Gmail system label/],
      [['add', '--scope', 'sender', '--ref', sender, '--category', 'automated', '--actions', 'add_label:Category_Social'], /is a Gmail system label/],
      [['add', '--scope', 'sender', '--ref', sender, '--category', 'fyi', '--from', '/(a+)+@evil/'], /conditions\.from: \/\(a\+\)\+@evil\/: catastrophic backtracking: its matching time grows exponentially/],
      [['add', '--scope', 'sender', '--ref', sender, '--category', 'fyi', '--body', '/\\s*unsubscribe\\s*$/'], /conditions\.body: .*grows as the square of the input/],
      [['add', '--scope', 'sender', '--ref', sender, '--category', 'fyi', '--header', 'X-Spam=/^(\\w|\\d)+$/'], /conditions\.header\[0\]\.pattern: .*catastrophic backtracking/],
      [['add', '--scope', 'sender', '--ref', sender, '--category', 'fyi', '--priority', 'high'], /--priority: expected a whole number/],
      [['add', '--scope', 'account', '--ref', `nobody-${tag}@example.com`, '--category', 'fyi'], /no account nobody-/],
      [['add', '--scope', 'sender', '--ref', sender, '--category', 'fyi', '--colour', 'red'], /Unknown option '--colour'/],
      [['remove', 'builtin:list-unsubscribe'], /is built in: override it with a rule of your own/],
      [['remove', randomUUID()], /no rule .* \(see npm run cli -- rules list\)/],
      [['test', '--subject', 'x'], /test needs --from/],
      [['test', '--sent', '--subject', 'x'], /test --sent needs --to/],
      [['add', '--scope', 'sender', '--ref', sender, '--expects-reply', 'maybe'], /--expects-reply: expected yes or no/],
      [['add', '--scope', 'sender', '--ref', sender, '--expects-reply', 'no', '--category', 'fyi'], /give exactly one of --category/],
      [['add', '--scope', 'sender', '--ref', sender, '--expects-reply', 'no', '--follow-up-days', '3'], /--follow-up-days: goes with --expects-reply yes/],
      [['add', '--scope', 'sender', '--ref', sender, '--expects-reply', 'yes', '--follow-up-days', '0'], /--follow-up-days: expected 1 to 60/],
      [['add', '--scope', 'sender', '--ref', sender, '--expects-reply', 'yes', '--dry-run', '--account', account.email], /--dry-run replays classification/],
    ];
    for (const [argv, message] of cases) {
      const { code, out } = await cli(...argv);
      expect(code, argv.join(' ')).toBe(2);
      expect(out, argv.join(' ')).toMatch(message);
      expect(out).toContain('usage: npm run cli -- rules');
    }
    expect(await ruleRows()).toEqual(before);
  });
});
