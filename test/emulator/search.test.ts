// Gmail search (q): the grammar (OR, {}, parentheses, negation, op:(...)), filename: and
// larger:/smaller:, as a table and as set algebra through googleapis; what stays unsupported
// is 400, never an empty list.
import type { gmail_v1 } from 'googleapis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { Random } from '../../emulators/gmail/random.js';
import { parseQuery } from '../../emulators/gmail/query.js';
import { connect, failure, raw, startEmulator } from '../helpers/googleapis-clients.js';

const OWNER = 'owner@example.com';
const DAY = 86_400_000;
const base = Date.UTC(2026, 2, 2, 12, 0, 0);
let emu: RunningGmailEmulator;
let gmail: gmail_v1.Gmail;
/** Message id → the name the table uses for it. */
const nameOf = new Map<string, string>();

const attachment = (filename: string, bytes: number) => ({ filename, contentType: 'application/octet-stream', contentBase64: Buffer.alloc(bytes, 7).toString('base64') });

beforeAll(async () => {
  emu = await startEmulator();
  gmail = (await connect(emu, OWNER, 'Olivia Owner')).gmail;
  const mail = {
    report: { from: 'alice@example.com', subject: 'Quarterly report', text: 'Numbers attached.', attachments: [attachment('Report.pdf', 2000)] },
    dinner: { from: 'bob@example.com', subject: 'Dinner plans', text: 'Movie tonight?' },
    invoice: { from: 'carol@example.com', subject: 'Invoice 42', text: 'Due soon.', labelIds: ['Finance'], attachments: [attachment('invoice-42.PDF', 80_000)] },
    movie: { from: 'alice@example.com', subject: 'Dinner and a movie', text: 'Saturday?', exactLabelIds: ['CATEGORY_PERSONAL'] },
    digest: { from: 'news@digest.example.com', subject: 'Weekly digest', text: 'Stories', headers: { 'List-Unsubscribe': '<mailto:u@digest.example.com>' }, attachments: [attachment('header.png', 500)] },
  };
  let day = 0;
  for (const [name, message] of Object.entries(mail)) {
    const delivered = await emu.control.deliver(OWNER, { ...message, internalDate: base + day++ * DAY });
    nameOf.set(delivered.id, name);
  }
});

afterAll(async () => {
  await emu.close();
});

async function search(q: string): Promise<string[]> {
  const { data } = await gmail.users.messages.list({ userId: 'me', q });
  expect(data.resultSizeEstimate, q).toBe(data.messages?.length ?? 0);
  return (data.messages ?? []).map((m) => nameOf.get(m.id ?? '') ?? '?').sort();
}

describe('query grammar', () => {
  it('OR binds tighter than the implicit AND; - negates a term or group; op:(...) applies op inside', () => {
    const t = (op: string, value: string) => ({ kind: 'term', op, value });
    expect(parseQuery('a b OR c')).toEqual({ kind: 'and', items: [t('', 'a'), { kind: 'or', items: [t('', 'b'), t('', 'c')] }] });
    expect(parseQuery('-a OR {b "c d"}')).toEqual({
      kind: 'and',
      items: [{ kind: 'or', items: [{ kind: 'not', item: t('', 'a') }, { kind: 'or', items: [t('', 'b'), t('', 'c d')] }] }],
    });
    expect(parseQuery('subject:(x -y) from:"Z W"')).toEqual({
      kind: 'and',
      items: [{ kind: 'and', items: [t('subject', 'x'), { kind: 'not', item: t('subject', 'y') }] }, t('from', 'Z W')],
    });
    // Lower-case "or" is a word, and an unknown "x:" prefix is free text, as in Gmail.
    expect(parseQuery('a or 10:30')).toEqual({ kind: 'and', items: [t('', 'a'), t('', 'or'), t('', '10:30')] });
    // An operator name with digits is an operator all the same.
    expect(parseQuery('rfc822msgid:a.1@b.example')).toEqual({ kind: 'and', items: [t('rfc822msgid', 'a.1@b.example')] });
  });
});

describe('messages.list q', () => {
  it.each([
    ['from:alice OR from:bob', ['dinner', 'movie', 'report']],
    ['from:alice from:bob', []],
    ['{from:alice from:bob}', ['dinner', 'movie', 'report']],
    ['from:{alice carol}', ['invoice', 'movie', 'report']],
    ['dinner OR invoice', ['dinner', 'invoice', 'movie']],
    ['(from:alice OR from:bob) -subject:dinner', ['report']],
    ['-{from:alice from:bob}', ['digest', 'invoice']],
    ['-(from:alice OR from:bob)', ['digest', 'invoice']],
    ['subject:(dinner movie)', ['movie']],
    ['subject:{report invoice}', ['invoice', 'report']],
    ['"dinner plans"', ['dinner']],
    ['from:alice AND subject:report', ['report']],
    ['from:alice or from:bob', []],
    ['filename:pdf', ['invoice', 'report']],
    ['filename:report.pdf', ['report']],
    ['filename:invoice', ['invoice']],
    ['filename:png OR filename:pdf', ['digest', 'invoice', 'report']],
    ['has:attachment -filename:pdf', ['digest']],
    ['larger:50K', ['invoice']],
    ['smaller:50k has:attachment', ['digest', 'report']],
    ['size:100000', ['invoice']],
    ['larger:1M', []],
    ['has:userlabels', ['invoice']],
    ['label:finance OR category:promotions', ['digest', 'invoice']],
    ['-in:inbox', ['movie']],
    [`after:${(base + DAY) / 1000} before:${(base + 3 * DAY) / 1000}`, ['dinner', 'invoice']],
    [`{before:${(base + DAY) / 1000} after:${(base + 4 * DAY) / 1000}}`, ['digest', 'report']],
    [`-after:${(base + DAY) / 1000} OR from:news`, ['digest', 'report']],
  ])('%s', async (q, expected) => {
    expect(await search(q)).toEqual(expected);
  });

  it('threads.list and drafts.list read the same grammar', async () => {
    const threads = await gmail.users.threads.list({ userId: 'me', q: 'from:bob OR filename:png' });
    expect(threads.data.threads).toHaveLength(2);
    const draft = await gmail.users.drafts.create({ userId: 'me', requestBody: { message: { raw: raw('To: alice@example.com\nSubject: Hi\n\nDraft') } } });
    try {
      expect((await gmail.users.drafts.list({ userId: 'me', q: '{to:alice to:zed}' })).data.drafts?.map((d) => d.id)).toEqual([draft.data.id]);
      expect((await gmail.users.drafts.list({ userId: 'me', q: 'to:zed OR to:yan' })).data.drafts).toBeUndefined();
    } finally {
      await gmail.users.drafts.delete({ userId: 'me', id: draft.data.id ?? '' });
    }
  });

  it.each([
    'cc:alice@example.com',
    'list:dev.example.com',
    'deliveredto:me@example.com',
    'is:muted',
    'has:drive',
    'category:nope',
    'larger:big',
    'older_than:soon',
    'from:',
    '(from:alice',
    'from:alice)',
    '{from:alice',
    '()',
    '{}',
    'alice OR',
    'OR alice',
    '"unterminated',
    'alice AROUND 3 bob',
  ])('answers 400 for %s', async (q) => {
    const err = await failure(gmail.users.messages.list({ userId: 'me', q }));
    expect(err.status).toBe(400);
    expect(err.data.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(err.data.error.message).toMatch(/^Invalid query: /);
  });
});

describe('set algebra over random terms', () => {
  const atoms = [
    'from:alice',
    'from:bob',
    'subject:dinner',
    'filename:pdf',
    'larger:10K',
    'has:attachment',
    'in:inbox',
    'label:finance',
    'movie',
    `after:${(base + 2 * DAY) / 1000}`,
    '"weekly digest"',
  ];

  it('A OR B is the union, A B the intersection, {A B} the union, -(A OR B) is -A -B', async () => {
    const random = new Random(7);
    const all = await search('');
    const union = (a: string[], b: string[]) => [...new Set([...a, ...b])].sort();
    for (let round = 0; round < 25; round++) {
      const [a, b] = [random.pick(atoms), random.pick(atoms)];
      const [ra, rb] = [await search(a), await search(b)];
      expect(await search(`${a} OR ${b}`), `${a} OR ${b}`).toEqual(union(ra, rb));
      expect(await search(`{${a} ${b}}`), `{${a} ${b}}`).toEqual(union(ra, rb));
      expect(await search(`${a} ${b}`), `${a} ${b}`).toEqual(ra.filter((x) => rb.includes(x)));
      expect(await search(`-(${a} OR ${b})`), `-(${a} OR ${b})`).toEqual(all.filter((x) => !ra.includes(x) && !rb.includes(x)));
      expect(await search(`-${a} -${b}`), `-${a} -${b}`).toEqual(all.filter((x) => !ra.includes(x) && !rb.includes(x)));
    }
  });
});
