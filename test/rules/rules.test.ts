import { describe, expect, it } from 'vitest';
import { BUILTIN_RULES, InvalidRuleError, applicableInstructions, evaluateFollowUpRules, evaluateRules, validateRule } from '../../src/rules/rules.js';
import { senderAddress } from '../../src/gmail/addresses.js';
import type { Rule, RuleEmail } from '../../src/rules/contracts.js';

/** An email as readThread hands it to the rules: the sender read from the From header by the one parser. */
function email(overrides: Partial<RuleEmail> = {}): RuleEmail {
  const from = overrides.from ?? 'Jane Doe <jane@example.com>';
  return {
    from,
    sender: senderAddress(from),
    to: 'me@mydomain.test',
    subject: 'Lunch on Friday?',
    date: 'Mon, 3 Mar 2025 10:00:00 +0000',
    body: 'Are you free for lunch on Friday?',
    ...overrides,
    headers: { from, ...overrides.headers },
  };
}

function rule(overrides: Partial<Rule> & Pick<Rule, 'id'>): Rule {
  return { scope: 'global', kind: 'deterministic', priority: 0, enabled: true, ...overrides };
}

describe('built-in rules', () => {
  it('List-Unsubscribe → newsletter', () => {
    const d = evaluateRules(BUILTIN_RULES, email({ headers: { 'list-unsubscribe': '<mailto:u@news.test>' } }));
    expect(d).toMatchObject({
      decided: true,
      category: 'newsletter',
      confidence: 1,
      ruleId: 'builtin:list-unsubscribe',
    });
    expect(d.decided && d.reason).toContain('List-Unsubscribe');
  });

  it.each([
    ['list', 'newsletter', 'builtin:precedence-list'],
    ['bulk', 'automated', 'builtin:precedence-bulk'],
    ['Junk', 'automated', 'builtin:precedence-bulk'],
  ])('Precedence: %s → %s', (value, category, ruleId) => {
    expect(evaluateRules(BUILTIN_RULES, email({ headers: { Precedence: value } }))).toMatchObject({
      decided: true,
      category,
      ruleId,
    });
  });

  it('Precedence values other than bulk/list/junk decide nothing', () => {
    expect(evaluateRules(BUILTIN_RULES, email({ headers: { Precedence: 'first-class' } }))).toEqual({ decided: false });
  });

  it.each(['auto-generated', 'auto-replied', 'auto-notified'])('Auto-Submitted: %s → automated', (value) => {
    expect(evaluateRules(BUILTIN_RULES, email({ headers: { 'Auto-Submitted': value } }))).toMatchObject({
      decided: true,
      category: 'automated',
      ruleId: 'builtin:auto-submitted',
    });
  });

  it('Auto-Submitted: no is a human message', () => {
    expect(evaluateRules(BUILTIN_RULES, email({ headers: { 'Auto-Submitted': 'no' } }))).toEqual({ decided: false });
  });

  it.each([
    'noreply@github.com',
    'GitHub <no-reply@github.com>',
    'Shop <no_reply@shop.test>',
    'donotreply@bank.test',
    '"Bank Alerts" <do-not-reply@bank.test>',
    'MAILER-DAEMON@mail.example.com',
    'Notifications <notifications-noreply@linkedin.test>',
    'noreply+bounce-123@service.test',
  ])('no-reply sender %s → automated', (from) => {
    expect(evaluateRules(BUILTIN_RULES, email({ from }))).toMatchObject({
      decided: true,
      category: 'automated',
      ruleId: 'builtin:no-reply-sender',
    });
  });

  it.each(['Jane Doe <jane@example.com>', 'Reply Team <replies@example.com>', 'annoreply@example.com'])(
    'ordinary sender %s decides nothing',
    (from) => {
      expect(evaluateRules(BUILTIN_RULES, email({ from }))).toEqual({ decided: false });
    },
  );

  it.each([
    ['MAILER DAEMON <>', {}],
    ['<>', {}],
    ['Mail Delivery System <mailer-daemon@mx.example.net>', {}],
    ['postmaster@example.org', {}],
    ['Jane <jane@example.com>', { 'return-path': '<>' }],
    ['Jane <jane@example.com>', { 'content-type': 'multipart/report; report-type=delivery-status; boundary="b"' }],
  ])('a bounce (From %s, headers %j) → automated', (from, headers) => {
    expect(evaluateRules(BUILTIN_RULES, email({ from, headers }))).toMatchObject({ decided: true, category: 'automated' });
  });

  it('a display name cannot make a no-reply or a sender rule match', () => {
    expect(evaluateRules(BUILTIN_RULES, email({ from: '"noreply@github.com" <jane@example.com>' }))).toEqual({ decided: false });
    const alice = rule({ id: 'alice', scope: 'sender', scopeRef: 'alice.martin@example.com', conditions: { from: 'alice.martin' }, category: 'needs_response' });
    const domain = rule({ id: 'ex', scope: 'domain', scopeRef: 'example.com', category: 'fyi' });
    for (const from of [
      '"<alice.martin@example.com>" <mallory@evil.example>',
      '=?UTF-8?B?PGFsaWNlLm1hcnRpbkBleGFtcGxlLmNvbT4=?= <mallory@evil.example>',
      'alice.martin@example.com <mallory@evil.example>',
      'mallory@evil.example (alice.martin@example.com)',
      'Alice <alice.martin@example.com>, Mallory <mallory@evil.example>',
      'Friends: alice.martin@example.com;',
    ]) {
      expect(evaluateRules([alice, domain], email({ from })), from).toEqual({ decided: false });
    }
    // The real alice, however she writes her address.
    for (const from of ['Alice <Alice.Martin@EXAMPLE.com>', 'alice.martin@example.com (Alice)']) {
      expect(evaluateRules([alice, domain], email({ from })), from).toMatchObject({ ruleId: 'alice' });
    }
  });

  it('matches an internationalised domain in either form', () => {
    const r = rule({ id: 'idn', scope: 'domain', scopeRef: 'bücher.example', category: 'fyi' });
    expect(evaluateRules([r], email({ from: 'Shop <info@BÜCHER.example>' }))).toMatchObject({ ruleId: 'idn' });
    expect(evaluateRules([r], email({ from: 'Shop <info@xn--bcher-kva.example>' }))).toMatchObject({ ruleId: 'idn' });
  });

  it('header names are matched case-insensitively', () => {
    expect(
      evaluateRules(BUILTIN_RULES, email({ headers: { 'LIST-UNSUBSCRIBE': '<https://x.test/u>' } })),
    ).toMatchObject({
      category: 'newsletter',
    });
  });
});

describe('precedence', () => {
  const newsletterMail = email({
    from: 'Boss <boss@corp.test>',
    subject: 'Weekly update',
    headers: { 'List-Unsubscribe': '<mailto:x@corp.test>' },
  });

  it('sender beats domain beats account beats global', () => {
    const rules: Rule[] = [
      ...BUILTIN_RULES,
      rule({ id: 'g', scope: 'global', category: 'fyi', priority: 1000 }),
      rule({ id: 'a', scope: 'account', scopeRef: 'acct-1', category: 'cold_outreach' }),
      rule({ id: 'd', scope: 'domain', scopeRef: 'corp.test', category: 'automated' }),
      rule({ id: 's', scope: 'sender', scopeRef: 'BOSS@corp.test', category: 'needs_response', priority: -5 }),
    ];
    expect(evaluateRules(rules, newsletterMail, 'acct-1')).toMatchObject({ ruleId: 's', category: 'needs_response' });
    expect(
      evaluateRules(
        rules.filter((r) => r.id !== 's'),
        newsletterMail,
        'acct-1',
      ),
    ).toMatchObject({ ruleId: 'd' });
    expect(
      evaluateRules(
        rules.filter((r) => !['s', 'd'].includes(r.id)),
        newsletterMail,
        'acct-1',
      ),
    ).toMatchObject({
      ruleId: 'a',
    });
    expect(
      evaluateRules(
        rules.filter((r) => !['s', 'd', 'a'].includes(r.id)),
        newsletterMail,
        'acct-1',
      ),
    ).toMatchObject({
      ruleId: 'g',
    });
  });

  it('a user rule with default priority beats a built-in of the same scope', () => {
    const rules = [...BUILTIN_RULES, rule({ id: 'mine', conditions: { subject: 'weekly update' }, category: 'fyi' })];
    expect(evaluateRules(rules, newsletterMail)).toMatchObject({ ruleId: 'mine', category: 'fyi' });
  });

  it('within a scope the higher priority wins, ties by id', () => {
    const rules = [
      rule({ id: 'b-low', conditions: { subject: 'update' }, category: 'fyi', priority: 1 }),
      rule({ id: 'c-high', conditions: { subject: 'update' }, category: 'automated', priority: 5 }),
      rule({ id: 'a-high', conditions: { subject: 'update' }, category: 'newsletter', priority: 5 }),
    ];
    expect(evaluateRules(rules, newsletterMail)).toMatchObject({ ruleId: 'a-high', category: 'newsletter' });
  });

  it('domain rules cover subdomains but not look-alikes', () => {
    const rules = [rule({ id: 'd', scope: 'domain', scopeRef: 'corp.test', category: 'fyi' })];
    expect(evaluateRules(rules, email({ from: 'x@mail.corp.test' }))).toMatchObject({ ruleId: 'd' });
    expect(evaluateRules(rules, email({ from: 'x@notcorp.test' }))).toEqual({ decided: false });
  });

  it('account rules apply only to their account when the account is known', () => {
    const rules = [rule({ id: 'a', scope: 'account', scopeRef: 'acct-1', category: 'fyi' })];
    expect(evaluateRules(rules, email(), 'acct-2')).toEqual({ decided: false });
    expect(evaluateRules(rules, email(), 'acct-1')).toMatchObject({ ruleId: 'a' });
  });

  it('disabled rules and instruction rules never decide', () => {
    const rules = [
      rule({ id: 'off', category: 'fyi', enabled: false }),
      rule({ id: 'hint', kind: 'instruction', instruction: 'Treat everything as fyi' }),
    ];
    expect(evaluateRules(rules, email())).toEqual({ decided: false });
  });

  it('all conditions must match', () => {
    const r = rule({ id: 'both', conditions: { from: 'example.com', subject: '/^invoice/' }, category: 'automated' });
    expect(evaluateRules([r], email({ subject: 'Invoice 42' }))).toMatchObject({ ruleId: 'both' });
    expect(evaluateRules([r], email({ subject: 'Your invoice 42' }))).toEqual({ decided: false });
    expect(evaluateRules([r], email({ subject: 'Invoice 42', from: 'a@other.test' }))).toEqual({ decided: false });
  });

  it('to, body and header patterns', () => {
    const r = rule({
      id: 'ops',
      conditions: { to: 'ops@', body: 'disk full', header: [{ name: 'X-Alert', pattern: '/^sev[12]$/' }] },
      category: 'needs_response',
    });
    const alert = email({ to: 'Ops <ops@corp.test>', body: 'Disk FULL on db-1', headers: { 'x-alert': 'SEV1' } });
    expect(evaluateRules([r], alert)).toMatchObject({ ruleId: 'ops', category: 'needs_response' });
    expect(evaluateRules([r], { ...alert, headers: { 'x-alert': 'sev3' } })).toEqual({ decided: false });
  });
});

describe('invalid rules', () => {
  it('an invalid regex is an InvalidRuleError naming the rule and field, not a crash', () => {
    const bad = rule({ id: 'broken', conditions: { subject: '/(unclosed/' }, category: 'fyi' });
    expect(() => evaluateRules([bad], email())).toThrow(InvalidRuleError);
    try {
      evaluateRules([bad], email());
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidRuleError);
      expect((err as InvalidRuleError).name).toBe('InvalidRuleError');
      expect((err as InvalidRuleError).ruleId).toBe('broken');
      expect((err as InvalidRuleError).field).toBe('conditions.subject');
      expect((err as Error).message).toMatch(/rule "broken": conditions.subject: invalid regular expression/);
    }
  });

  it('stateful regex flags are rejected', () => {
    expect(() => validateRule(rule({ id: 'g', conditions: { subject: '/x/g' }, category: 'fyi' }))).toThrow(
      /unsupported regex flag "g"/,
    );
  });

  it('missing category, scope reference or instruction text', () => {
    expect(() => validateRule(rule({ id: 'nocat' }))).toThrow(/category/);
    expect(() => validateRule(rule({ id: 'nosender', scope: 'sender', category: 'fyi' }))).toThrow(/scopeRef/);
    expect(() => validateRule(rule({ id: 'noinstr', kind: 'instruction' }))).toThrow(/instruction/);
    expect(() => validateRule(rule({ id: 'empty', conditions: { from: '' }, category: 'fyi' }))).toThrow(/non-empty/);
  });

  it('a broken rule that does not apply to this sender or is disabled does not block classification', () => {
    const rules = [
      rule({ id: 'other', scope: 'sender', scopeRef: 'x@y.test', conditions: { subject: '/(/' }, category: 'fyi' }),
      rule({ id: 'off', conditions: { subject: '/(/' }, category: 'fyi', enabled: false }),
    ];
    expect(evaluateRules(rules, email())).toEqual({ decided: false });
  });
});

describe('applicableInstructions', () => {
  const rules: Rule[] = [
    rule({
      id: 'i-sender',
      kind: 'instruction',
      scope: 'sender',
      scopeRef: 'jane@example.com',
      instruction: 'Jane is my manager.',
    }),
    rule({
      id: 'i-other-sender',
      kind: 'instruction',
      scope: 'sender',
      scopeRef: 'bob@example.com',
      instruction: 'Bob.',
    }),
    rule({
      id: 'i-domain',
      kind: 'instruction',
      scope: 'domain',
      scopeRef: 'example.com',
      instruction: 'Example is a client.',
    }),
    rule({
      id: 'i-account',
      kind: 'instruction',
      scope: 'account',
      scopeRef: 'acct-1',
      instruction: 'I work in sales.',
    }),
    rule({
      id: 'i-account-2',
      kind: 'instruction',
      scope: 'account',
      scopeRef: 'acct-2',
      instruction: 'Other account.',
    }),
    rule({ id: 'i-global-low', kind: 'instruction', priority: 1, instruction: 'Be strict about newsletters.' }),
    rule({ id: 'i-global-high', kind: 'instruction', priority: 9, instruction: 'Calendar invites are fyi.' }),
    rule({
      id: 'i-conditional',
      kind: 'instruction',
      conditions: { subject: 'contract' },
      instruction: 'Contracts always need a response.',
    }),
    rule({ id: 'i-disabled', kind: 'instruction', instruction: 'Disabled.', enabled: false }),
    rule({ id: 'det', category: 'fyi', conditions: { subject: 'nothing-matches-this' } }),
  ];

  it('collects the scopes that apply, general first, by priority within a scope', () => {
    expect(applicableInstructions(rules, email(), 'acct-1')).toEqual([
      'Calendar invites are fyi.',
      'Be strict about newsletters.',
      'I work in sales.',
      'Example is a client.',
      'Jane is my manager.',
    ]);
  });

  it('includes conditional instructions only when their conditions match', () => {
    expect(applicableInstructions(rules, email({ subject: 'Contract renewal' }), 'acct-1')).toContain(
      'Contracts always need a response.',
    );
  });

  it('another sender gets only the scopes that apply to them', () => {
    expect(applicableInstructions(rules, email({ from: 'Bob <bob@elsewhere.test>' }), 'acct-2')).toEqual([
      'Calendar invites are fyi.',
      'Be strict about newsletters.',
      'Other account.',
    ]);
  });
});

describe('evaluateFollowUpRules: whether a message the user sent expects an answer', () => {
  /** A message the user sent: the sender is the user, the scope is its recipients. */
  const sent = (overrides: Partial<RuleEmail> = {}) =>
    email({ from: 'Me <me@mydomain.test>', to: 'Ann <ann@vendor.example>', subject: 'Re: Invoice 7', body: 'Thanks, paid.', ...overrides });
  const yes = (overrides: Partial<Rule> & Pick<Rule, 'id'>) => rule({ kind: 'follow_up', expectsReply: true, ...overrides });
  const no = (overrides: Partial<Rule> & Pick<Rule, 'id'>) => rule({ kind: 'follow_up', expectsReply: false, ...overrides });

  it('a domain or sender rule is in scope through any recipient (To), subdomains included', () => {
    const rules = [no({ id: 'vendor', scope: 'domain', scopeRef: 'vendor.example' })];
    expect(evaluateFollowUpRules(rules, sent())).toMatchObject({ decided: true, expectsReply: false, ruleId: 'vendor' });
    expect(evaluateFollowUpRules(rules, sent({ to: 'bob@other.example, x@billing.vendor.example' }))).toMatchObject({ decided: true, ruleId: 'vendor' });
    expect(evaluateFollowUpRules(rules, sent({ to: 'bob@other.example' }))).toEqual({ decided: false });
    // The user's own address is the sender, not a recipient: a rule for it does not apply.
    expect(evaluateFollowUpRules([no({ id: 'me', scope: 'sender', scopeRef: 'me@mydomain.test' })], sent())).toEqual({ decided: false });
  });

  it('scope, then priority, as for classification; conditions on subject and body; its own wait', () => {
    const rules = [
      yes({ id: 'all-questions', scope: 'global', conditions: { body: '?' }, followUpDays: 5 }),
      no({ id: 'ann-thanks', scope: 'sender', scopeRef: 'ann@vendor.example', conditions: { body: '/^thanks/' } }),
      yes({ id: 'vendor-invoices', scope: 'domain', scopeRef: 'vendor.example', conditions: { subject: 'invoice' }, followUpDays: 2 }),
    ];
    expect(evaluateFollowUpRules(rules, sent())).toMatchObject({ decided: true, expectsReply: false, ruleId: 'ann-thanks' });
    expect(evaluateFollowUpRules(rules, sent({ body: 'Could you send the PO?' }))).toMatchObject({ decided: true, expectsReply: true, businessDays: 2, ruleId: 'vendor-invoices' });
    expect(evaluateFollowUpRules(rules, sent({ to: 'x@elsewhere.example', body: 'Free on Friday?' }))).toMatchObject({ ruleId: 'all-questions', businessDays: 5 });
    expect(evaluateFollowUpRules(rules, sent({ to: 'x@elsewhere.example', body: 'Noted.' }))).toEqual({ decided: false });
  });

  it('classification and follow-up rules never decide for each other', () => {
    const rules = [no({ id: 'fu', scope: 'global' }), rule({ id: 'cat', category: 'fyi' })];
    expect(evaluateRules(rules, email())).toMatchObject({ ruleId: 'cat' });
    expect(evaluateFollowUpRules(rules, sent())).toMatchObject({ ruleId: 'fu' });
    expect(applicableInstructions(rules, email(), 'acc')).toEqual([]);
  });

  it('a follow-up rule needs its answer; a wait only with yes, 1 to 60 business days', () => {
    expect(() => validateRule(rule({ id: 'x', kind: 'follow_up' }))).toThrow(/expectsReply: expected yes or no/);
    expect(() => validateRule(no({ id: 'x', followUpDays: 3 }))).toThrow(/followUpDays/);
    expect(() => validateRule(yes({ id: 'x', followUpDays: 0 }))).toThrow(/followUpDays/);
    expect(() => validateRule(yes({ id: 'x', followUpDays: 61 }))).toThrow(/followUpDays/);
    expect(() => validateRule(rule({ id: 'x', category: 'fyi', followUpDays: 3 }))).toThrow(/followUpDays/);
    expect(() => validateRule(yes({ id: 'x', followUpDays: 60 }))).not.toThrow();
  });
});
