// Tier one of classification: rules the user (or we) wrote down. A matching deterministic rule decides
// the category with confidence 1 and no LLM call; instruction rules only add natural-language guidance to
// the LLM prompt of tier two. Follow-up rules decide, for a message the user sent, whether it expects an
// answer (before the LLM is asked). Pure functions, no I/O: rules are loaded elsewhere and passed in.
import { domainToASCII } from 'node:url';
import { canonicalAddress, domainOf, parseAddressList } from '../gmail/addresses.js';
import { headerValue } from '../mail/headers.js';
import { isCategory } from '../mail/types.js';
import { regexLiteral, unsafePatternReason, type PatternInput } from './pattern-safety.js';
import type { FollowUpRuleDecision, HeaderCondition, Pattern, Rule, RuleDecision, RuleEmail, RuleScope } from './contracts.js';

/** A follow-up rule's wait is at most this many business days (FOLLOW_UP_BUSINESS_DAYS' own bound). */
export const MAX_FOLLOW_UP_DAYS = 60;

/**
 * A rule that cannot be evaluated (bad regex, missing category or scope reference). It is a configuration
 * error: retrying will not help, so activities should fail it as non-retryable (the class name is the
 * Temporal error type; keep it stable).
 */
export class InvalidRuleError extends Error {
  constructor(
    readonly ruleId: string,
    readonly field: string,
    detail: string,
  ) {
    super(`rule "${ruleId}": ${field}: ${detail}`);
    this.name = 'InvalidRuleError';
  }
}

/** The rules every account starts with. Global scope and negative priority, so any user rule overrides them. */
export const BUILTIN_RULES: readonly Rule[] = [
  {
    // Our own scheduled reports (briefs, digests) in the user's inbox: mail to read, left where it is
    // (automated would mark it read). The header is ours; Gmail keeps it on messages.insert only.
    id: 'builtin:scheduled-report',
    scope: 'global',
    kind: 'deterministic',
    conditions: { header: [{ name: 'X-Durable-Inbox-Schedule' }] },
    category: 'fyi',
    priority: -5,
    enabled: true,
  },
  {
    id: 'builtin:list-unsubscribe',
    scope: 'global',
    kind: 'deterministic',
    conditions: { header: [{ name: 'List-Unsubscribe' }] },
    category: 'newsletter',
    priority: -10,
    enabled: true,
  },
  {
    // Our own reminders (src/reminders): fyi, so they stay unread in the inbox with no action taken.
    id: 'builtin:own-reminder',
    scope: 'global',
    kind: 'deterministic',
    conditions: { header: [{ name: 'X-Durable-Inbox-Reminder' }] },
    category: 'fyi',
    priority: -5,
    enabled: true,
  },
  {
    // Our weekly "what I learned" e-mail (src/learning/weekly-email-activities.ts): mail to read, left unread.
    id: 'builtin:own-lessons',
    scope: 'global',
    kind: 'deterministic',
    conditions: { header: [{ name: 'X-Durable-Inbox-Lessons' }] },
    category: 'fyi',
    priority: -5,
    enabled: true,
  },
  {
    // RFC 3834: any value but "no" marks mail sent by a program (auto-generated, auto-replied, ...).
    id: 'builtin:auto-submitted',
    scope: 'global',
    kind: 'deterministic',
    conditions: { header: [{ name: 'Auto-Submitted', pattern: '/^(?!\\s*no\\s*$)/' }] },
    category: 'automated',
    priority: -20,
    enabled: true,
  },
  {
    id: 'builtin:no-reply-sender',
    scope: 'global',
    kind: 'deterministic',
    // The local part contains noreply, no-reply, no_reply, donotreply, do-not-reply, or is mailer-daemon or postmaster.
    conditions: { from: '/(?:^|[^a-z0-9])(?:no[-_.]?reply|do[-_.]?not[-_.]?reply|mailer-daemon|postmaster)[^@\\s<>"]*@/' },
    category: 'automated',
    priority: -30,
    enabled: true,
  },
  {
    // A bounce comes from the null reverse path (RFC 5321 §4.5.5): `From: MAILER DAEMON <>`, or `<>`
    // as the Return-Path the receiving server recorded.
    id: 'builtin:null-sender',
    scope: 'global',
    kind: 'deterministic',
    conditions: { header: [{ name: 'From', pattern: '/<\\s*>\\s*$/' }] },
    category: 'automated',
    priority: -31,
    enabled: true,
  },
  {
    id: 'builtin:null-return-path',
    scope: 'global',
    kind: 'deterministic',
    conditions: { header: [{ name: 'Return-Path', pattern: '/^\\s*<\\s*>\\s*$/' }] },
    category: 'automated',
    priority: -32,
    enabled: true,
  },
  {
    // Delivery status notifications and other reports (RFC 6522).
    id: 'builtin:delivery-report',
    scope: 'global',
    kind: 'deterministic',
    conditions: { header: [{ name: 'Content-Type', pattern: '/^\\s*multipart\\/report\\b/' }] },
    category: 'automated',
    priority: -33,
    enabled: true,
  },
  {
    id: 'builtin:precedence-list',
    scope: 'global',
    kind: 'deterministic',
    conditions: { header: [{ name: 'Precedence', pattern: '/^\\s*list\\s*$/' }] },
    category: 'newsletter',
    priority: -40,
    enabled: true,
  },
  {
    // Marketing bulk mail carries List-Unsubscribe (Gmail requires it of bulk senders) and is caught above;
    // bulk or junk mail without it is typically transactional machine mail.
    id: 'builtin:precedence-bulk',
    scope: 'global',
    kind: 'deterministic',
    conditions: { header: [{ name: 'Precedence', pattern: '/^\\s*(?:bulk|junk)\\s*$/' }] },
    category: 'automated',
    priority: -50,
    enabled: true,
  },
];

/**
 * Rules see at most this much of each header (From, To, Subject, any header) and of the body: mail is
 * written by strangers, and a pattern's time is bounded by its input (a crafted 300 kB From header).
 */
export const RULE_HEADER_CHARS = 2048;
export const RULE_BODY_CHARS = 20_000;

const bounded = (value: string, input: PatternInput) => value.slice(0, input === 'body' ? RULE_BODY_CHARS : RULE_HEADER_CHARS);

const SCOPE_RANK: Record<RuleScope, number> = { sender: 3, domain: 2, account: 1, global: 0 };

type Matcher = (value: string) => boolean;

interface CompiledRule {
  rule: Rule;
  /** Each returns a description of what matched, or null. */
  checks: Array<(email: RuleEmail) => string | null>;
}

const ALLOWED_FLAGS = new Set(['i', 'm', 's', 'u']);

/**
 * The pattern as a matcher of (bounded) input. The built-in rules' patterns are ours and reviewed
 * (test/rules/rules.test.ts checks them too); a user's are checked for catastrophic backtracking.
 */
function compilePattern(pattern: unknown, ruleId: string, field: string, input: PatternInput): Matcher {
  if (typeof pattern !== 'string' || pattern.length === 0) {
    throw new InvalidRuleError(ruleId, field, 'expected a non-empty pattern');
  }
  const literal = regexLiteral(pattern);
  if (!literal) {
    const needle = pattern.toLowerCase();
    return (value) => value.toLowerCase().includes(needle);
  }
  const { source, flags } = literal;
  const bad = [...flags].find((f) => !ALLOWED_FLAGS.has(f));
  if (bad) throw new InvalidRuleError(ruleId, field, `unsupported regex flag "${bad}" in ${pattern}`);
  let regex: RegExp;
  try {
    regex = new RegExp(source, flags.includes('i') ? flags : `${flags}i`);
  } catch (err) {
    throw new InvalidRuleError(ruleId, field, `invalid regular expression ${pattern}: ${(err as Error).message}`);
  }
  const unsafe = ruleId.startsWith('builtin:') ? null : unsafePatternReason(regex.source, regex.flags, input);
  if (unsafe) throw new InvalidRuleError(ruleId, field, `${pattern}: ${unsafe}`);
  return (value) => regex.test(value);
}

function fieldCheck(field: 'from' | 'to' | 'subject' | 'body', pattern: Pattern, ruleId: string) {
  const input = field === 'body' ? 'body' : 'header';
  const matches = compilePattern(pattern, ruleId, `conditions.${field}`, input);
  // `from` is the sender's address: a display name can never make a rule match.
  return (email: RuleEmail) =>
    matches(bounded((field === 'from' ? email.sender : email[field]) ?? '', input)) ? `${field} matches ${JSON.stringify(pattern)}` : null;
}

function headerCheck(condition: HeaderCondition, index: number, ruleId: string) {
  const field = `conditions.header[${index}]`;
  if (typeof condition?.name !== 'string' || condition.name.trim() === '') {
    throw new InvalidRuleError(ruleId, `${field}.name`, 'expected a header name');
  }
  const matches =
    condition.pattern === undefined ? () => true : compilePattern(condition.pattern, ruleId, `${field}.pattern`, 'header');
  return (email: RuleEmail) => {
    const value = headerValue(email.headers ?? {}, condition.name);
    if (value === undefined || !matches(bounded(value, 'header'))) return null;
    return condition.pattern === undefined
      ? `header ${condition.name} present`
      : `header ${condition.name} matches ${JSON.stringify(condition.pattern)}`;
  };
}

/** Checks a rule and turns its patterns into matchers; throws InvalidRuleError when it is unusable. */
function compileRule(rule: Rule): CompiledRule {
  if ((rule.scope === 'domain' || rule.scope === 'sender') && !rule.scopeRef?.trim()) {
    throw new InvalidRuleError(rule.id, 'scopeRef', `a ${rule.scope} rule needs the ${rule.scope} it applies to`);
  }
  if (rule.kind === 'deterministic' && !isCategory(rule.category)) {
    throw new InvalidRuleError(
      rule.id,
      'category',
      `expected a category, got ${JSON.stringify(rule.category ?? null)}`,
    );
  }
  if (rule.kind === 'instruction' && !rule.instruction?.trim()) {
    throw new InvalidRuleError(rule.id, 'instruction', 'expected the instruction text');
  }
  if (rule.kind === 'follow_up' && typeof rule.expectsReply !== 'boolean') {
    throw new InvalidRuleError(rule.id, 'expectsReply', 'expected yes or no');
  }
  const days = rule.followUpDays;
  if (days !== undefined && (rule.kind !== 'follow_up' || !rule.expectsReply || !Number.isInteger(days) || days < 1 || days > MAX_FOLLOW_UP_DAYS)) {
    throw new InvalidRuleError(rule.id, 'followUpDays', `expected 1 to ${MAX_FOLLOW_UP_DAYS} business days on a rule whose sent mail expects an answer`);
  }
  const c = rule.conditions ?? {};
  const checks: CompiledRule['checks'] = [];
  for (const field of ['from', 'to', 'subject', 'body'] as const) {
    const pattern = c[field];
    if (pattern !== undefined) checks.push(fieldCheck(field, pattern, rule.id));
  }
  (c.header ?? []).forEach((h, i) => checks.push(headerCheck(h, i, rule.id)));
  return { rule, checks };
}

/** Throws InvalidRuleError when a rule could not be evaluated; for validating rules when they are saved. */
export function validateRule(rule: Rule): void {
  compileRule(rule);
}

interface Audience {
  sender: string;
  domain: string;
  /** Undefined: account rules are taken to be the caller's account already. */
  accountId?: string;
}

function inScope(rule: Rule, who: Audience): boolean {
  const ref = rule.scopeRef?.trim().toLowerCase() ?? '';
  switch (rule.scope) {
    case 'global':
      return true;
    case 'account':
      return who.accountId === undefined || rule.scopeRef === undefined || rule.scopeRef === who.accountId;
    case 'domain': {
      const domain = domainToASCII(ref.replace(/^@/, ''));
      return who.domain !== '' && domain !== '' && (who.domain === domain || who.domain.endsWith(`.${domain}`));
    }
    case 'sender':
      return who.sender !== '' && who.sender === canonicalAddress(ref);
  }
}

function audienceOf(email: RuleEmail, accountId?: string): Audience {
  const sender = canonicalAddress(email.sender);
  return { sender, domain: domainOf(sender), accountId };
}

/** Enabled rules of one kind that apply to any of these audiences, compiled, each id once (first wins). */
function rulesInScope(rules: readonly Rule[], kind: Rule['kind'], ...who: Audience[]): CompiledRule[] {
  const seen = new Set<string>();
  const out: CompiledRule[] = [];
  for (const rule of rules) {
    if (!rule.enabled || rule.kind !== kind || seen.has(rule.id)) continue;
    seen.add(rule.id);
    if (who.some((w) => inScope(rule, w))) out.push(compileRule(rule));
  }
  return out;
}

/** Runs a rule's checks: the descriptions of what matched, or null when a condition fails. */
function matchRule(compiled: CompiledRule, email: RuleEmail): string[] | null {
  const matched: string[] = [];
  for (const check of compiled.checks) {
    const hit = check(email);
    if (hit === null) return null;
    matched.push(hit);
  }
  return matched;
}

/** Within one scope: higher priority first, then id, so the order never depends on load order. */
function byPriority(a: CompiledRule, b: CompiledRule): number {
  return b.rule.priority - a.rule.priority || (a.rule.id < b.rule.id ? -1 : a.rule.id > b.rule.id ? 1 : 0);
}

const specificFirst = (a: CompiledRule, b: CompiledRule) =>
  SCOPE_RANK[b.rule.scope] - SCOPE_RANK[a.rule.scope] || byPriority(a, b);
const generalFirst = (a: CompiledRule, b: CompiledRule) =>
  SCOPE_RANK[a.rule.scope] - SCOPE_RANK[b.rule.scope] || byPriority(a, b);

/**
 * Tier one: the first matching deterministic rule by scope (sender > domain > account > global), then
 * priority (higher first), then id. Pass BUILTIN_RULES along with the user's rules to get the built-ins.
 * `accountId`, when given, restricts account rules to that account.
 * Throws InvalidRuleError for an applicable rule that cannot be evaluated.
 */
export function evaluateRules(rules: readonly Rule[], email: RuleEmail, accountId?: string): RuleDecision {
  const hit = firstMatch(rulesInScope(rules, 'deterministic', audienceOf(email, accountId)), email);
  return hit ? { decided: true, category: hit.rule.category!, confidence: 1, ruleId: hit.rule.id, reason: hit.reason } : { decided: false };
}

/** The first candidate that matches, by scope then priority then id, with why it matched. */
function firstMatch(candidates: CompiledRule[], email: RuleEmail): { rule: Rule; reason: string } | null {
  for (const compiled of candidates.sort(specificFirst)) {
    const matched = matchRule(compiled, email);
    if (matched === null) continue;
    const { rule } = compiled;
    const scope = rule.scopeRef ? `${rule.scope} ${rule.scopeRef}` : rule.scope;
    const why = matched.length > 0 ? matched.join(', ') : 'every message in scope';
    return { rule, reason: `rule ${rule.id} (${scope}): ${why}` };
  }
  return null;
}

/**
 * Whether a message the user sent expects an answer, as the follow-up rules say: the first matching
 * one by scope (sender > domain > account > global), priority, id, as for classification. A sender or
 * domain rule is in scope when any recipient (To) is that address or at that domain; `from`
 * matches the user's own address. Throws InvalidRuleError for an applicable rule that cannot be evaluated.
 */
export function evaluateFollowUpRules(rules: readonly Rule[], sent: RuleEmail, accountId?: string): FollowUpRuleDecision {
  const recipients = parseAddressList(sent.to).map((a) => canonicalAddress(a.address));
  const audiences = [...new Set(recipients)].map((address) => ({ sender: address, domain: domainOf(address), accountId }));
  const hit = firstMatch(rulesInScope(rules, 'follow_up', ...(audiences.length ? audiences : [{ sender: '', domain: '', accountId }])), sent);
  if (!hit) return { decided: false };
  const { rule, reason } = hit;
  return { decided: true, expectsReply: rule.expectsReply!, ...(rule.followUpDays ? { businessDays: rule.followUpDays } : {}), ruleId: rule.id, reason };
}

/**
 * The instruction texts for the LLM prompt from every scope that applies to this email, general first
 * (global, account, domain, sender) so the more specific ones read as refinements; within a scope by
 * priority. Instruction rules with conditions are included only when the conditions match.
 */
export function applicableInstructions(rules: readonly Rule[], email: RuleEmail, accountId: string): string[] {
  const texts = rulesInScope(rules, 'instruction', audienceOf(email, accountId))
    .sort(generalFirst)
    .filter((compiled) => matchRule(compiled, email) !== null)
    .map((compiled) => compiled.rule.instruction!.trim());
  return [...new Set(texts)];
}
