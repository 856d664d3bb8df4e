// A label name in a search: which names a search can say in any provider's syntax, and how Gmail's
// search (and Gmail's IMAP, X-GM-RAW) writes one. Pure.
import { isGmailSystemLabel } from './system-labels.js';

/**
 * A label name safe in any provider's search syntax (letters, digits, blanks, - _ . / between them),
 * not one of the system labels' names; undefined for anything else.
 */
export function searchableLabelName(name: string): string | undefined {
  const n = name.trim();
  if (n.length === 0 || n.length > 100 || !/^[\p{L}\p{N}](?:[\p{L}\p{N} _./-]*[\p{L}\p{N}])?$/u.test(n)) return undefined;
  return isGmailSystemLabel(n) ? undefined : n;
}

/** A label name as Gmail's search writes it (label:my-label): lower case, blanks and slashes as dashes. */
export function gmailLabelTerm(name: string): string | undefined {
  const n = searchableLabelName(name);
  return n === undefined ? undefined : n.toLowerCase().replace(/[\s/]+/g, '-');
}
