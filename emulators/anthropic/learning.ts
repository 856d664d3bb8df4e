// Stand-in for a model proposing writing lessons (the `propose_writing_lessons` tool, src/learning/
// writing-lessons.ts; docs/anthropic-emulator.md). It reads the prompt's <evidence> blocks and
// proposes, deterministically, only what repeats in at least two of them: a last line the user
// always added (a sign-off), a greeting word the user always opened with, a line or a sentence the
// user always removed, a line the user always added in the middle (a link), replies rewritten in
// German (a few German function words), an instruction typed into two reworks. Scoped to the sender or domain when every item
// is from it, else to the account; a lesson listed in <existing_lessons> is not proposed again.
// Each names its aspect: a sign-off is sign_off, a greeting greeting, a line or sentence left out
// wording, a line added content, a rework instruction procedure (never tone: it cannot judge one).
// Each lesson is worded in one of several ways (WORDINGS, picked by a digest of what it says), as a
// model would not always say it the same; the drafting stand-in (lessonsInPrompt) understands every
// one of those wordings, and the product puts its own sentence for typed lessons (sign-off, greeting,
// language) into the prompt. A real model finds subtler lessons; this shows the plumbing in tests,
// the demo and the learning bench.
import { createHash } from 'node:crypto';

interface Item {
  id: string;
  source: 'sent' | 'rework';
  sender: string;
  added: { text: string; position?: 'first' | 'last' }[];
  removed: string[];
  instructions: string[];
}

interface Lesson {
  kind: 'fact' | 'preference' | 'procedure';
  aspect: 'tone' | 'greeting' | 'sign_off' | 'language' | 'wording' | 'content' | 'procedure' | 'fact';
  scope: 'account' | 'domain' | 'sender';
  scopeRef?: string;
  text: string;
  /** A typed aspect's value alone (sign-off line, greeting word, BCP 47 tag). */
  value?: string;
  evidence: string[];
}

const EVIDENCE = /<evidence id="([^"]+)" source="(sent|rework)" sender="([^"]*)">\n([\s\S]*?)\n<\/evidence>/g;
const normalise = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

function itemsOf(promptText: string): Item[] {
  return [...promptText.matchAll(EVIDENCE)].map(([, id, source, sender, body]) => ({
    id: id!,
    source: source as Item['source'],
    sender: sender!,
    added: [...body!.matchAll(/<added(?: position="(first|last)")?>(.*)<\/added>/g)].map((m) => ({ text: m[2]!, ...(m[1] ? { position: m[1] as 'first' | 'last' } : {}) })),
    removed: [...body!.matchAll(/<removed>(.*)<\/removed>/g)].map((m) => m[1]!),
    instructions: /<instructions>\n([\s\S]*?)\n<\/instructions>/.exec(body!)?.[1]?.split('\n').map((l) => l.trim()).filter(Boolean) ?? [],
  }));
}

/** The narrowest scope every supporting item shares. */
function scopeOf(items: Item[]): Pick<Lesson, 'scope' | 'scopeRef'> {
  const senders = new Set(items.map((i) => i.sender.toLowerCase()));
  if (senders.size === 1 && [...senders][0]) return { scope: 'sender', scopeRef: [...senders][0]! };
  const domains = new Set([...senders].map((s) => s.split('@')[1] ?? ''));
  if (domains.size === 1 && [...domains][0]) return { scope: 'domain', scopeRef: [...domains][0]! };
  return { scope: 'account' };
}

/** Groups items by what `keyOf` finds in each (several keys per item allowed); keeps groups of two or more. */
function repeated(items: Item[], keyOf: (i: Item) => string[]): [string, Item[]][] {
  const groups = new Map<string, Item[]>();
  for (const item of items) for (const key of new Set(keyOf(item))) groups.set(key, [...(groups.get(key) ?? []), item]);
  return [...groups].filter(([key, group]) => key !== '' && group.length >= 2).sort(([a], [b]) => a.localeCompare(b));
}

const sentencesOf = (line: string) => line.split(/(?<=[.!?])\s+/).filter(Boolean);

/** The sentences of removed lines that none of the added lines keeps (a sentence cut out of a line). */
function removedSentences(item: Item): string[] {
  return item.removed.flatMap((line) => {
    const sentences = sentencesOf(line);
    return sentences.length > 1 ? sentences.filter((s) => !item.added.some((a) => a.text.includes(s))) : [];
  });
}

/** Common German words: a line with three of them is taken to be German (the stand-in knows no other language). */
const GERMAN_WORDS = new Set(
  'und ich sie ihre ihr ihnen für mit zu die der das den dem ein eine ist nicht vielen dank danke habe melde mich bei auf wie gewünscht überarbeitet gelesen'.split(' '),
);

/** The language of a line the user wrote, when the stand-in recognises one (only German). */
export function languageOf(line: string): 'German' | undefined {
  const words = new Set(line.toLowerCase().split(/[^\p{L}]+/u).filter((w) => GERMAN_WORDS.has(w)));
  return words.size >= 3 ? 'German' : undefined;
}

/**
 * The drafting stand-in's own sentences in German (all the German it writes); any other sentence stays
 * as it is. The learning bench's user answers one domain with these same sentences.
 */
const GERMAN: [RegExp, string][] = [
  [/^Thank you for your email about "(.*)"\.$/, 'Vielen Dank für Ihre E-Mail zu "$1".'],
  [/^I have read your request and will come back to you with the details shortly\.$/, 'Ich habe Ihre Anfrage gelesen und melde mich in Kürze mit den Einzelheiten.'],
  [/^Thanks for letting me know\.$/, 'Danke für die Nachricht.'],
  [/^Revised as asked: (.*)$/, 'Überarbeitet wie gewünscht: $1'],
];

/** `line` in German, sentence by sentence, as far as the phrasebook goes. */
export function inGerman(line: string): string {
  return sentencesOf(line)
    .map((sentence) => {
      const entry = GERMAN.find(([re]) => re.test(sentence));
      return entry ? sentence.replace(entry[0], entry[1]) : sentence;
    })
    .join(' ');
}

/**
 * The ways the stand-in words each lesson (a real model words them its own way each time); the first
 * is the product's own sentence for the typed ones (src/learning/contracts.ts renderTypedLesson).
 * The drafting stand-in reads all of them back (lessonsInPrompt).
 */
export const WORDINGS = {
  signOff: [(v: string) => `End every reply with "${v}".`, (v: string) => `Sign every reply as "${v}".`, (v: string) => `Close each message with "${v}".`],
  greeting: [
    (v: string) => `Open every reply with "${v}" and the first name.`,
    (v: string) => `Greet people with "${v}" followed by their first name.`,
    (v: string) => `Start replies with "${v}" and the first name.`,
  ],
  leaveOut: [(v: string) => `Leave out "${v}".`, (v: string) => `Never write "${v}".`, (v: string) => `Drop "${v}" from replies.`],
  addLine: [
    (v: string) => `Add the line "${v}" before the sign-off.`,
    (v: string) => `Put "${v}" on its own line just above the sign-off.`,
    (v: string) => `Include the line "${v}" right before signing off.`,
  ],
  language: [(v: string) => `Write every reply in ${v}.`, (v: string) => `Answer in ${v}.`, (v: string) => `Reply in ${v} rather than English.`],
} as const;

/** One of a lesson's wordings, picked by a digest of what it says (deterministic; different lessons get different ones). */
export function worded(kind: keyof typeof WORDINGS, value: string): string {
  const ways = WORDINGS[kind];
  const n = createHash('sha256').update(`${kind}:${value}`).digest()[0]! % ways.length;
  return ways[n]!(value);
}

/** What a lesson of the stand-in says, whichever wording it has (undefined: none of them). */
function understood(kind: keyof typeof WORDINGS, line: string): string | undefined {
  for (const way of WORDINGS[kind]) {
    const [before, after] = way('\u0000').split('\u0000') as [string, string];
    if (line.startsWith(before) && line.endsWith(after) && line.length > before.length + after.length) return line.slice(before.length, line.length - after.length);
  }
  return undefined;
}

export function writingLessons(promptText: string): { lessons: Lesson[] } {
  const items = itemsOf(promptText);
  const existing = new Set(
    (/<existing_lessons>\n([\s\S]*?)\n<\/existing_lessons>/.exec(promptText)?.[1] ?? '')
      .split('\n')
      .map((l) => normalise(l.replace(/^- \[[^\]]*\] /, ''))),
  );
  const sent = items.filter((i) => i.source === 'sent');
  const lessons: Lesson[] = [];
  const add = (kind: Lesson['kind'], aspect: Lesson['aspect'], text: string, group: Item[], value?: string) => {
    if (existing.has(normalise(text)) || lessons.some((l) => normalise(l.text) === normalise(text))) return;
    lessons.push({ kind, aspect, ...scopeOf(group), text, ...(value !== undefined ? { value } : {}), evidence: group.map((i) => i.id) });
  };
  for (const [line, group] of repeated(sent, (i) => i.added.filter((a) => a.position === 'last').map((a) => a.text))) {
    add('preference', 'sign_off', worded('signOff', line), group, line);
  }
  for (const [word, group] of repeated(sent, (i) => i.added.filter((a) => a.position === 'first').map((a) => a.text.split(/[\s,]/)[0] ?? ''))) {
    add('preference', 'greeting', worded('greeting', word), group, word);
  }
  for (const [line, group] of repeated(sent, (i) => [...i.removed, ...removedSentences(i)])) add('preference', 'wording', worded('leaveOut', line), group);
  for (const [line, group] of repeated(sent, (i) => i.added.filter((a) => !a.position && !i.removed.some((r) => r.includes(a.text))).map((a) => a.text))) {
    add('preference', 'content', worded('addLine', line), group);
  }
  for (const [language, group] of repeated(sent, (i) => i.added.flatMap((a) => languageOf(a.text) ?? []))) {
    add('preference', 'language', worded('language', language), group, 'de');
  }
  const reworks = items.filter((i) => i.source === 'rework');
  for (const [key, group] of repeated(reworks, (i) => i.instructions.map(normalise))) {
    const said = group[0]!.instructions.find((l) => normalise(l) === key)!;
    add('procedure', 'procedure', /[.!?]$/.test(said) ? said : `${said}.`, group);
  }
  return { lessons };
}

export interface LessonsInPrompt {
  closeWith?: string;
  /** The greeting word to open with (before the first name). */
  openWith?: string;
  /** Lines, or sentences within a line, to leave out. */
  leaveOut: string[];
  /** Lines to add before the sign-off. */
  addLines: string[];
  /** The language to write the body in (the greeting and the sign-off stay as lessons say). */
  language?: string;
}

/**
 * What the drafting stand-in does with the lessons in a prompt (the block buildDraftPrompt writes):
 * the greeting to open with, the sign-off to end with, the lines or sentences to leave out, the
 * lines to add before the sign-off and the language of the body (German only), so a demo or the learning bench shows a lesson taking hold.
 */
export function lessonsInPrompt(promptText: string): LessonsInPrompt {
  const block = /What the user taught you about their writing[^\n]*\n((?:- .*(?:\n|$))+)/.exec(promptText)?.[1] ?? '';
  const lines = block.split('\n').map((l) => l.replace(/^- /, '').trim());
  const all = (kind: keyof typeof WORDINGS) => lines.flatMap((l) => understood(kind, l) ?? []);
  const closeWith = all('signOff')[0];
  const openWith = all('greeting')[0];
  const leaveOut = all('leaveOut');
  const addLines = all('addLine');
  const language = all('language').find((v) => /^\p{L}+$/u.test(v));
  return { ...(closeWith ? { closeWith } : {}), ...(openWith ? { openWith } : {}), leaveOut, addLines, ...(language ? { language } : {}) };
}

/** `line` without the lines or sentences to leave out (undefined: the whole line goes). */
export function leftOut(line: string, leaveOut: readonly string[]): string | undefined {
  if (leaveOut.includes(line)) return undefined;
  const sentences = sentencesOf(line);
  if (sentences.length < 2) return line;
  const kept = sentences.filter((s) => !leaveOut.includes(s));
  return kept.length > 0 ? kept.join(' ') : undefined;
}
