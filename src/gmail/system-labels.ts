// Gmail's system labels (labels.list type "system"; their ids are their names). Adding or removing
// one is not a harmless label change: TRASH trashes, SPAM reports spam, removing INBOX archives,
// UNREAD and STARRED are the user's own marks. Trash and archive go through their own action kinds,
// so a label action (from the agent, a rule or the CLI) may never name one. Pure, workflow-safe.

/** The ids Gmail's labels.list returns with type "system" (developers.google.com/gmail/api/guides/labels). */
export const GMAIL_SYSTEM_LABELS = [
  'INBOX',
  'SPAM',
  'TRASH',
  'UNREAD',
  'STARRED',
  'IMPORTANT',
  'SENT',
  'DRAFT',
  'CHAT',
  'CATEGORY_PERSONAL',
  'CATEGORY_SOCIAL',
  'CATEGORY_PROMOTIONS',
  'CATEGORY_UPDATES',
  'CATEGORY_FORUMS',
] as const;

/**
 * Whether a label name (or id) is one of Gmail's system labels, as Gmail resolves names: case and
 * surrounding blanks do not matter, and any CATEGORY_ name is taken as one (Gmail may add tabs).
 */
export function isGmailSystemLabel(name: string): boolean {
  const upper = name.trim().toUpperCase();
  return (GMAIL_SYSTEM_LABELS as readonly string[]).includes(upper) || upper.startsWith('CATEGORY_');
}
