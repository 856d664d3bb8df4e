// How the user tells us what to change in a draft (docs/rework.md shows it with examples):
//
//   1. Type the instructions at the top of the draft, above the reply we wrote, and add the Rework label.
//   2. Or put them anywhere in the draft between double brackets: [[mention the Friday deadline]].
//
// There is deliberately no marker line in our drafts: the draft is what the user sends, and a marker
// would go to the recipient whenever the user sends it unedited. Instead we find where our text begins
// in the edited draft by comparing it with the body we generated (which the workflow keeps), so edits
// to the reply itself, Gmail's re-wrapping and its HTML editor do not confuse the extraction.
import { isQuotation, replyLines, toLines, toPlainText } from '../mail/reply-text.js';

export interface ReworkExtraction {
  /** What the user asked for, one instruction per line, or null when the draft holds no instructions. */
  instructions: string | null;
}

/** [[ ... ]] blocks; they may span lines. */
const BRACKETED = /\[\[([\s\S]*?)\]\]/g;
/** Lines of at least this length also match our text by prefix (Gmail re-wraps long lines). */
const PREFIX_MATCH_MIN = 16;

/** Lines of at least this similarity to one of ours count as the user's edit of it, not as an instruction. */
const EDITED_LINE_SIMILARITY = 0.5;

/** Which of our lines (index into `ours`) this draft line is, or -1. */
function ourLineIndex(line: string, ours: readonly string[]): number {
  if (line === '') return -1;
  const exact = ours.indexOf(line);
  if (exact >= 0 || line.length < PREFIX_MATCH_MIN) return exact;
  return ours.findIndex((g) => g.length >= PREFIX_MATCH_MIN && (g.startsWith(line) || line.startsWith(g)));
}

/** Dice coefficient of character bigrams, case-insensitive: 1 for equal lines, near 0 for unrelated ones. */
function similarity(a: string, b: string): number {
  const bigrams = (s: string) => {
    const lower = s.toLowerCase();
    const counts = new Map<string, number>();
    for (let i = 0; i < lower.length - 1; i++) {
      const bigram = lower.slice(i, i + 2);
      counts.set(bigram, (counts.get(bigram) ?? 0) + 1);
    }
    return counts;
  };
  const x = bigrams(a);
  const y = bigrams(b);
  let shared = 0;
  for (const [bigram, n] of x) shared += Math.min(n, y.get(bigram) ?? 0);
  const total = Math.max(0, a.length - 1) + Math.max(0, b.length - 1);
  return total === 0 ? 0 : (2 * shared) / total;
}

/**
 * The text the user typed above our reply: everything before the first line that belongs to the body we
 * generated, less the user's edits of our lines before it (say "Hi Alice," changed to "Hello Alice,").
 * Empty when our body cannot be found any more (the user rewrote it all: there is no telling
 * instructions from a new reply, so only [[...]] counts then).
 */
function textAboveReply(draftLines: readonly string[], generatedBody: string): string {
  const ours = toLines(toPlainText(generatedBody)).filter((line) => line !== '');
  let start = -1;
  let ourIndex = -1;
  for (let i = 0; i < draftLines.length && start < 0; i++) {
    ourIndex = ourLineIndex(draftLines[i]!, ours);
    if (ourIndex >= 0) start = i;
  }
  if (start <= 0) return '';
  const typed = draftLines.slice(0, start).filter((line) => line !== '' && !isQuotation(line));
  // Walk back over our lines that come before the first one found unchanged.
  while (typed.length > 0 && ourIndex > 0 && similarity(typed.at(-1)!, ours[ourIndex - 1]!) >= EDITED_LINE_SIMILARITY) {
    typed.pop();
    ourIndex--;
  }
  return typed.join('\n');
}

/**
 * Reads the user's rework instructions from the draft as it is now in Gmail (plain text or the HTML of
 * Gmail's editor), given the body we generated for it.
 */
export function extractReworkInstructions(draftBody: string, previousGeneratedBody: string): ReworkExtraction {
  const bracketed: string[] = [];
  const withoutBrackets = toPlainText(draftBody).replace(BRACKETED, (_whole, inner: string) => {
    const text = toLines(inner)
      .filter((line) => line !== '')
      .join(' ');
    if (text) bracketed.push(text);
    return '';
  });
  const parts = [textAboveReply(toLines(withoutBrackets), previousGeneratedBody), ...bracketed].filter(Boolean);
  return { instructions: parts.length > 0 ? parts.join('\n') : null };
}

/**
 * Whether the draft in Gmail is no longer the body we generated: the user edited it (Gmail's
 * re-wrapping, re-spacing and HTML editor do not count). An edited draft is the user's work, and a new
 * message in the thread does not overwrite it.
 */
export function draftEditedByUser(draftBody: string, generatedBody: string): boolean {
  const text = (body: string) => replyLines(body).join(' ');
  return text(draftBody) !== text(generatedBody);
}

