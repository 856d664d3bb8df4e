// The cold-email gate's signals and its word (docs/cleanup.md): first-contact outreach is decided by
// rules when the signals agree, handed to the LLM with a hint when only one speaks, and never gated
// when the sender is allowlisted or has an earlier thread with the user. Pure: the caller reads the
// allowlist and the mailbox (src/thread/gmail-activities.ts) and passes what it found.
import { headerValue } from '../mail/headers.js';
import { COLD_EMAIL_RULE_ID, type RuleEmail } from './contracts.js';
import { RULE_BODY_CHARS, RULE_HEADER_CHARS } from './rules.js';

/**
 * Sales and outreach wording: phrases a pitch uses and a correspondent rarely does. Whole phrases,
 * lower case, matched in the subject and the start of the body.
 */
export const OUTREACH_PHRASES: readonly string[] = [
  'book a demo',
  'schedule a demo',
  'quick call',
  '15 minutes',
  '15-minute call',
  'worth a chat',
  'open to a conversation',
  'would love to connect',
  'reaching out because',
  'just following up on my last email',
  'bump this to the top of your inbox',
  'increase your revenue',
  'generate more leads',
  'grow your pipeline',
  'partnership opportunity',
  'i help companies like',
  'are you the right person',
  'who is the best person to talk to',
];

/**
 * Headers bulk senders and sequencing tools put on mail (the bulk-sender signal). List-Unsubscribe
 * and Precedence alone usually mean a newsletter, and the built-in rules say so; here they only add
 * to the wording.
 */
const BULK_HEADERS: ReadonlyArray<{ name: string; pattern?: RegExp }> = [
  { name: 'list-unsubscribe' },
  { name: 'precedence', pattern: /^\s*(?:bulk|list|junk)\s*$/i },
  { name: 'feedback-id' },
  { name: 'x-campaign' },
  { name: 'x-mailer', pattern: /\b(?:lemlist|outreach|apollo|salesloft|hubspot|mailshake|woodpecker|reply\.io|instantly|mailchimp)\b/i },
];

/** The headers the gate reads (readThread keeps them on the message, cut to a cap). */
export const COLD_EMAIL_HEADERS = BULK_HEADERS.map((h) => h.name);

export interface ColdEmailSignals {
  /** Outreach phrases found. */
  wording: string[];
  /** Bulk-sender headers present. */
  bulkHeaders: string[];
}

export function coldEmailSignals(email: RuleEmail): ColdEmailSignals {
  const text = `${email.subject.slice(0, RULE_HEADER_CHARS)}\n${email.body.slice(0, RULE_BODY_CHARS)}`.toLowerCase().replace(/\s+/g, ' ');
  const wording = OUTREACH_PHRASES.filter((phrase) => text.includes(phrase));
  const bulkHeaders = BULK_HEADERS.filter(({ name, pattern }) => {
    const value = headerValue(email.headers ?? {}, name);
    return value !== undefined && (pattern === undefined || pattern.test(value.slice(0, RULE_HEADER_CHARS)));
  }).map((h) => h.name);
  return { wording, bulkHeaders };
}

/** What the gate found out about the sender (the caller's reads). */
export interface SenderHistory {
  /** Allowlisted by this entry (`sender x@y`, `domain y`); undefined: not allowlisted. */
  allowedBy?: string;
  /** Whether the mailbox holds another thread with the sender, either direction. */
  earlierThread: boolean;
}

/**
 * The gate's word: `cold`, the rules decide cold_outreach; `ask`, the LLM decides, told it is a
 * first contact; `exempt`, the sender is never gated (an LLM's cold_outreach does not hold); `none`,
 * nothing to say.
 */
export type ColdEmailGate = { gate: 'cold' | 'ask' | 'exempt'; reason: string } | { gate: 'none' };

export function coldEmailGate(signals: ColdEmailSignals, sender: SenderHistory): ColdEmailGate {
  if (sender.allowedBy) return { gate: 'exempt', reason: `allowlisted (${sender.allowedBy})` };
  if (sender.earlierThread) return { gate: 'exempt', reason: 'an earlier thread with the sender' };
  const found = [...signals.wording.map((w) => `"${w}"`), ...signals.bulkHeaders.map((h) => `header ${h}`)].join(', ');
  // Two pieces of wording, or wording from a bulk sender: first-contact outreach, no model needed.
  if (signals.wording.length >= 2 || (signals.wording.length >= 1 && signals.bulkHeaders.length >= 1)) {
    return { gate: 'cold', reason: `rule ${COLD_EMAIL_RULE_ID}: first contact, ${found}` };
  }
  if (signals.wording.length + signals.bulkHeaders.length > 0) return { gate: 'ask', reason: `first contact, ${found}` };
  return { gate: 'none' };
}

/** The hint the LLM gets for an `ask`: what it could not know from the email alone. */
export function firstContactInstruction(reason: string): string {
  return `Cold-email check: the user has never exchanged mail with this sender (${reason}). If this is an unsolicited sales, recruiting or partnership pitch, classify it as cold_outreach.`;
}
