// Rules on mail written by strangers: a user's regular expression that could backtrack
// catastrophically is refused when saved and skipped when found stored (edited in SQL); every
// pattern, the built-ins' included, sees at most RULE_HEADER_CHARS of a header and RULE_BODY_CHARS
// of the body. How fast matching stays on a crafted 300 kB header is measured by
// `npm run bench -- rules`, not timed here.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPrismaClient, type PrismaClient } from '../../src/db/client.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { precheckRules, regexLiteral, unsafePatternReason } from '../../src/rules/pattern-safety.js';
import { BUILTIN_RULES, evaluateRules, InvalidRuleError, RULE_BODY_CHARS, RULE_HEADER_CHARS, validateRule } from '../../src/rules/rules.js';
import { rulesVerdict } from '../../src/thread/rules-verdict.js';
import type { Rule, RuleEmail } from '../../src/rules/contracts.js';

const email = (overrides: Partial<RuleEmail> = {}): RuleEmail => ({
  from: 'Jane Doe <jane@example.com>',
  sender: 'jane@example.com',
  to: 'me@mydomain.test',
  subject: 'Hello',
  date: 'Mon, 3 Mar 2025 10:00:00 +0000',
  body: 'Hi.',
  headers: {},
  ...overrides,
});
const rule = (id: string, conditions: Rule['conditions']): Rule => ({ id, scope: 'global', kind: 'deterministic', category: 'fyi', priority: 0, enabled: true, conditions });
const refusal = (conditions: Rule['conditions']) => {
  try {
    validateRule(rule('r1', conditions));
    return null;
  } catch (err) {
    if (!(err instanceof InvalidRuleError)) throw err;
    return err.message;
  }
};

describe('patterns checked when saved', () => {
  it.each([
    [{ subject: '/(a+)+$/' }, /conditions\.subject: \/\(a\+\)\+\$\/: catastrophic backtracking: its matching time grows exponentially \(for example on '/],
    [{ from: '/(a|a)*b/' }, /conditions\.from: .*grows exponentially/],
    [{ header: [{ name: 'X-Mailer', pattern: '/^(\\w+\\s?)*$/' }] }, /conditions\.header\[0\]\.pattern: .*grows exponentially/],
    [{ body: '/invoice.*paid/' }, /conditions\.body: .*grows as the square of the input/],
    [{ to: '/\\s*a*\\s*$/' }, /conditions\.to: .*grows as the power 3 of the input/],
    // A backreference is judged by fuzzing, whose degree is a lower bound: refused on a header whatever it finds.
    [{ to: '/(a)\\1+$/' }, /conditions\.to: .*grows as the (square|power \d+) of the input/],
  ])('refuses %j', (conditions, message) => {
    expect(refusal(conditions)).toMatch(message);
  });

  it('accepts what matches in linear time, and a quadratic pattern on a (bounded) header', () => {
    for (const conditions of [{ subject: '/^re:/' }, { subject: '/invoice|receipt/' }, { body: '/\\border\\s+#?\\d+/' }, { subject: '/invoice.*paid/' }, { body: 'invoice' }]) {
      expect(refusal(conditions), JSON.stringify(conditions)).toBeNull();
    }
  });

  it('the built-in rules pass the same check', () => {
    const patterns = BUILTIN_RULES.flatMap((r) => [r.conditions?.from, ...(r.conditions?.header ?? []).map((h) => h.pattern)]);
    for (const pattern of patterns.flatMap((p) => (p ? [regexLiteral(p)!] : []))) {
      expect(unsafePatternReason(new RegExp(pattern.source, `${pattern.flags}i`).source, `${pattern.flags}i`, 'header'), pattern.source).toBeNull();
    }
  });
});

describe('bounded input', () => {
  it('a header pattern sees the first RULE_HEADER_CHARS characters only', () => {
    const rules = [rule('tail', { from: '/x>$/' }), rule('hdr', { header: [{ name: 'X-Tag', pattern: 'needle' }] })];
    const at = (n: number) => `${'a'.repeat(n)}x>`;
    expect(evaluateRules(rules, email({ sender: at(RULE_HEADER_CHARS - 2) }))).toMatchObject({ decided: true, ruleId: 'tail' });
    expect(evaluateRules(rules, email({ sender: at(RULE_HEADER_CHARS) })).decided).toBe(false);
    expect(evaluateRules(rules, email({ headers: { 'x-tag': `${' '.repeat(RULE_HEADER_CHARS - 6)}needle` } }))).toMatchObject({ ruleId: 'hdr' });
    expect(evaluateRules(rules, email({ headers: { 'x-tag': `${' '.repeat(RULE_HEADER_CHARS)}needle` } })).decided).toBe(false);
  });

  it('a body pattern sees the first RULE_BODY_CHARS characters only', () => {
    const rules = [rule('body', { body: '/needle/' })];
    expect(evaluateRules(rules, email({ body: `${'.'.repeat(RULE_BODY_CHARS - 6)}needle` }))).toMatchObject({ ruleId: 'body' });
    expect(evaluateRules(rules, email({ body: `${'.'.repeat(RULE_BODY_CHARS)}needle` })).decided).toBe(false);
  });

  it('the built-in sender rule still reads a hostile 300 kB sender (its first 2 kB)', () => {
    const hostile = ' noreply'.repeat(37_500);
    expect(hostile.length).toBe(300_000);
    expect(evaluateRules(BUILTIN_RULES, email({ sender: hostile })).decided).toBe(false);
    expect(evaluateRules(BUILTIN_RULES, email({ sender: `no-reply@shop.example${' '.repeat(300_000)}` }))).toMatchObject({ ruleId: 'builtin:no-reply-sender' });
  });
});

describe('rules stored before the check', () => {
  const tag = randomUUID().slice(0, 8);
  let prisma: PrismaClient;
  let accountId: string;

  beforeAll(async () => {
    prisma = createPrismaClient(inject('databaseUrl'));
    accountId = (await prisma.account.create({ data: { email: `patterns-${tag}@example.com`, encryptedTokens: Buffer.from('unused') } })).id;
  });

  afterAll(async () => {
    await prisma.rule.deleteMany({ where: { scopeRef: accountId } });
    await prisma.account.delete({ where: { id: accountId } });
    await prisma.$disconnect();
  });

  it('are skipped with the reason when a pattern fails it; the other rules still decide', async () => {
    // Edited in SQL, past the CLI's check.
    const bad = await prisma.rule.create({ data: { scope: 'account', scopeRef: accountId, kind: 'deterministic', action: 'fyi', conditions: { subject: '/^(a|aa)+$/' }, priority: 5 } });
    await prisma.rule.create({ data: { scope: 'account', scopeRef: accountId, kind: 'deterministic', action: 'automated', conditions: { subject: '/^report \\d+/' } } });
    const verdict = await rulesVerdict(prismaExecutor(prisma), accountId, email({ subject: 'Report 7 for March' }));
    expect(verdict).toMatchObject({ decided: true, category: 'automated' });
    expect(verdict.skipped).toEqual([expect.stringMatching(new RegExp(`^rule "${bad.id}": conditions\\.subject: /\\^\\(a\\|aa\\)\\+\\$/: catastrophic backtracking`))]);
  });

  it('are checked off the event loop before they are compiled', async () => {
    const fresh = rule('fresh', { subject: `/^(b|bb)+${tag}$/` });
    const ticks = { n: 0 };
    const timer = setInterval(() => ticks.n++, 5);
    await precheckRules([fresh]);
    clearInterval(timer);
    expect(ticks.n).toBeGreaterThan(0); // the loop ran while recheck analysed the pattern
    expect(() => validateRule(fresh)).toThrow(/grows exponentially/);
  });
});
