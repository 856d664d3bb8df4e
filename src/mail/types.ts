// Shared shapes of the classification domain. Plain JSON only: these values cross Temporal activity
// boundaries and are imported by workflow code, so no Dates, Maps, classes or Node built-ins here.

/**
 * What the classifier decides about the newest message of a thread. Only `needs_response` leads to a
 * draft; every other category is a reason *not* to spend an LLM call on a reply.
 *
 * The set is chosen by what the assistant does next, not by topic:
 * - `personal` is left out: "from a friend" says nothing about whether a reply is expected, so such mail
 *   is `needs_response` or `fyi` like any other.
 * - `spam` is left out: Gmail's filter keeps spam out of INBOX, which is all we process. What does get
 *   through and would waste drafts is unsolicited pitches, hence `cold_outreach`.
 */
export const CATEGORIES = ['needs_response', 'fyi', 'newsletter', 'automated', 'cold_outreach'] as const;
export type Category = (typeof CATEGORIES)[number];

/** One line per category, used verbatim in the classification prompt. */
export const CATEGORY_DESCRIPTIONS: Record<Category, string> = {
  needs_response: 'a person expects a reply, answer, decision or action from the user',
  fyi: 'written by a person or team for the user to read; no reply is expected',
  newsletter: 'subscribed content, marketing, digests or mailing-list traffic',
  automated: 'machine-generated and transactional: receipts, invoices, notifications, alerts, codes',
  cold_outreach: 'an unsolicited sales, recruiting or partnership pitch from someone the user does not know',
};

export function isCategory(value: unknown): value is Category {
  return typeof value === 'string' && (CATEGORIES as readonly string[]).includes(value);
}

/**
 * One email as rules and prompts see it. Header values are RFC 2047-decoded text; `headers` is keyed by
 * header name (look names up case-insensitively with `headerValue` from email.ts), first occurrence wins.
 */
export interface EmailForPrompt {
  /** The From header as written, e.g. `"Doe, Jane" <jane@example.com>`. */
  from: string;
  /** The To header as written; may list several addresses. */
  to: string;
  subject: string;
  /** The Date header as written by the sender. */
  date: string;
  /** Plain-text body. */
  body: string;
  headers: Record<string, string>;
}
