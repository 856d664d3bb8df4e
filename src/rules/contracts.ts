// What a rule is: the user's (and our built-in) rules as data, and what evaluating them decides.
// Types only; rules.ts evaluates them, pattern-safety.ts vets their patterns, rule-rows.ts stores them.
import type { ActionSpec } from '../actions/contracts.js';
import type { Category, EmailForPrompt } from '../mail/types.js';

/**
 * An email as the rules see it: `sender` is the From address read once from the parsed header
 * (src/gmail/addresses.ts; '' when the mail has no single usable one). Scopes and the `from`
 * condition match it, never the display name.
 */
export type RuleEmail = EmailForPrompt & { sender: string };

/** Who a rule is for. A more specific scope wins: sender > domain > account > global. */
export type RuleScope = 'global' | 'account' | 'domain' | 'sender';

/**
 * A pattern is a case-insensitive substring (`invoice`) or a regular expression between slashes
 * (`/^re:/`, flags m, s and u allowed; matching is always case-insensitive). A user's regular
 * expression that could backtrack catastrophically is refused (src/rules/pattern-safety.ts).
 */
export type Pattern = string;

export interface HeaderCondition {
  name: string;
  /** Omitted: the header only has to be present. */
  pattern?: Pattern;
}

/** Every condition given must match (AND). A rule without conditions matches all mail in its scope. */
export interface RuleConditions {
  /** Matched against the sender's address only (lower-case); the display name never takes part. */
  from?: Pattern;
  to?: Pattern;
  subject?: Pattern;
  body?: Pattern;
  header?: HeaderCondition[];
}

export interface Rule {
  id: string;
  scope: RuleScope;
  /** Account id, sender domain (`example.com`, subdomains included) or sender address; unused for global. */
  scopeRef?: string;
  /**
   * deterministic: decides `category`. instruction: adds `instruction` to the LLM prompt. follow_up:
   * decides `expectsReply` for a message the user sent (its scope is the recipients).
   */
  kind: 'deterministic' | 'instruction' | 'follow_up';
  conditions?: RuleConditions;
  category?: Category;
  instruction?: string;
  /** What to do with the thread when this rule decides its category; absent: the category's actions. */
  actions?: ActionSpec[];
  /** An agent profile's name: the thread goes to that agent instead of classify → draft. */
  route?: string;
  /** A follow-up rule's answer: whether matching sent mail expects an answer. */
  expectsReply?: boolean;
  /** A follow-up rule's own wait, in business days (else the account's setting). */
  followUpDays?: number;
  /** Within one scope, a higher priority is tried first. User rules default to 0; built-ins are negative. */
  priority: number;
  enabled: boolean;
}

export type RuleDecision =
  { decided: true; category: Category; confidence: 1; ruleId: string; reason: string } | { decided: false };

export type FollowUpRuleDecision =
  { decided: true; expectsReply: boolean; businessDays?: number; ruleId: string; reason: string } | { decided: false };

/** The rule id the cold-email gate's decisions carry (src/rules/cold-email.ts) in the decision log and the journal. */
export const COLD_EMAIL_RULE_ID = 'builtin:cold-email';
/** The rule id of mail from a sender that keeps sending after the user's unsubscribe was carried out. */
export const STILL_SENDING_RULE_ID = 'builtin:still-sending';
