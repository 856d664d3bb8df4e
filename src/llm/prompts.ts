// Prompt text for classification and drafting, fitted to a token cap. Tokens are estimated at four
// characters each, which over-counts English prose a little: a prompt that fits here fits the API.
// Emails go in XML-like blocks (<email>, <message>, ...) so the model can tell data from instructions.
// Mail text (emails, thread messages, tone examples) goes in with its secrets removed (redact.ts).
import { redactSecrets } from './redact.js';
import { CATEGORIES, CATEGORY_DESCRIPTIONS, type EmailForPrompt } from '../mail/types.js';
import { CLASSIFY_TOOL_NAME } from './schemas.js';

export const CHARS_PER_TOKEN = 4;

/** Tokens kept free for what the estimate cannot see (message framing on the API side). */
const SAFETY_MARGIN_TOKENS = 32;
/** Below this many tokens for the newest email there is no point in asking the model anything. */
const MIN_EMAIL_TOKENS = 32;
const TRUNCATION_MARK = '\n[truncated to fit the token cap]';
/**
 * Header lines of an email in a prompt are cut to this many characters: mail with a 100 kB From, To or
 * Subject exists (crafted or broken), and the body, not the headers, is what a prompt must keep.
 */
export const MAX_PROMPT_HEADER_CHARS = 1000;
const HEADER_CUT_MARK = ' [header cut]';

/**
 * The most of the cap each optional part may take; the email or thread gets the rest (about a third at least).
 * User-written parts are bounded so that a long signature or instruction list cannot crowd out the mail.
 */
const SHARE_OF_CAP = {
  classificationInstructions: 0.25,
  signature: 0.05,
  toneExamples: 0.15,
  draftInstructions: 0.15,
  previousDraft: 0.2,
  reworkInstructions: 0.1,
  lessons: 0.1,
} as const;

const share = (cap: number, part: keyof typeof SHARE_OF_CAP) => Math.floor(cap * SHARE_OF_CAP[part]);

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** Keeps the beginning of `text` within `maxTokens`, marking the cut. */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (estimateTokens(text) <= maxTokens) return text;
  const keep = Math.max(0, maxTokens * CHARS_PER_TOKEN - TRUNCATION_MARK.length);
  return text.slice(0, keep).trimEnd() + TRUNCATION_MARK;
}

function wasCut(...texts: string[]): boolean {
  return texts.some((text) => text.includes(TRUNCATION_MARK) || text.includes(HEADER_CUT_MARK));
}

function headerLine(value: string): string {
  return value.length <= MAX_PROMPT_HEADER_CHARS ? value : value.slice(0, MAX_PROMPT_HEADER_CHARS) + HEADER_CUT_MARK;
}

export interface Prompt {
  system: string;
  /** The one user turn. */
  user: string;
  /** Older thread messages left out to fit the cap. */
  omittedMessages: number;
  /** True when a message was omitted or any text cut (tone examples that do not fit are simply left out). */
  truncated: boolean;
}

export function formatEmail(email: EmailForPrompt, tag: string, attributes = ''): string {
  return [
    `<${tag}${attributes}>`,
    `From: ${headerLine(email.from)}`,
    `To: ${headerLine(email.to)}`,
    `Date: ${headerLine(email.date)}`,
    `Subject: ${headerLine(email.subject)}`,
    '',
    redactSecrets(email.body.trim()),
    `</${tag}>`,
  ].join('\n');
}

/** The email with its body cut so the whole block fits `maxTokens`; null if not even the headers fit. */
function fitEmail(email: EmailForPrompt, tag: string, attributes: string, maxTokens: number): string | null {
  const full = formatEmail(email, tag, attributes);
  if (estimateTokens(full) <= maxTokens) return full;
  const frameTokens = estimateTokens(formatEmail({ ...email, body: '' }, tag, attributes));
  const bodyTokens = maxTokens - frameTokens;
  if (bodyTokens < MIN_EMAIL_TOKENS) return null;
  return formatEmail({ ...email, body: truncateToTokens(email.body.trim(), bodyTokens) }, tag, attributes);
}

/** An introduced list, one item a line, cut to `maxTokens`; '' when there is nothing to list. */
function listBlock(intro: string, items: readonly string[], maxTokens: number): string {
  const lines = items.map((text) => text.trim()).filter(Boolean);
  if (lines.length === 0) return '';
  return truncateToTokens(`\n\n${intro}\n` + lines.map((line) => `- ${line}`).join('\n'), maxTokens);
}

const instructionsBlock = (instructions: readonly string[], maxTokens: number) =>
  listBlock("The user's own instructions, general ones first; a later, more specific one overrides an earlier one:", instructions, maxTokens);

function tooSmall(maxInputTokens: number): RangeError {
  return new RangeError(`maxInputTokens ${maxInputTokens} is too small to hold the prompt and one email`);
}

export interface ClassificationPromptInput {
  email: EmailForPrompt;
  instructions: readonly string[];
  maxInputTokens: number;
  /** Tokens the request spends outside system and user text, e.g. the tool definition. */
  reservedTokens?: number;
}

export function buildClassificationPrompt(input: ClassificationPromptInput): Prompt {
  const cap = input.maxInputTokens - (input.reservedTokens ?? 0) - SAFETY_MARGIN_TOKENS;
  const categories = CATEGORIES.map((c) => `- ${c}: ${CATEGORY_DESCRIPTIONS[c]}`).join('\n');
  const instructions = instructionsBlock(input.instructions, share(cap, 'classificationInstructions'));
  const system =
    "You classify email for the user's inbox assistant. Decide the category of the email below from the user's " +
    `point of view.\n\nCategories:\n${categories}\n\n` +
    `Call the ${CLASSIFY_TOOL_NAME} tool once. confidence is the probability (0 to 1) that the category is right; ` +
    'reason is one short sentence.' +
    instructions;
  const lead = 'Classify this email.\n\n';
  const email = fitEmail(input.email, 'email', '', cap - estimateTokens(system) - estimateTokens(lead));
  if (email === null) throw tooSmall(input.maxInputTokens);
  return { system, user: lead + email, omittedMessages: 0, truncated: wasCut(system, lead + email) };
}

export interface DraftPromptInput {
  /** The thread, oldest message first; the reply answers the last one. */
  thread: readonly EmailForPrompt[];
  /** The user's own earlier replies, most relevant first. */
  toneExamples: readonly string[];
  signature?: string;
  instructions?: readonly string[];
  reworkInstructions?: string;
  previousDraft?: string;
  /** Accepted writing lessons (src/learning/lessons-for-draft.ts), most specific first, already bounded. */
  lessons?: readonly string[];
  maxInputTokens: number;
}

const lessonsBlock = (lessons: readonly string[], maxTokens: number) =>
  listBlock('What the user taught you about their writing (lessons they accepted), the most specific first:', lessons, maxTokens);

/** As many examples as fit, in the given order, each whole or cut to what is left. */
function toneBlock(examples: readonly string[], maxTokens: number): string {
  const intro = '\n\nReplies the user wrote before; match their tone and length:\n';
  let block = '';
  for (const example of examples.map((e) => redactSecrets(e.trim())).filter(Boolean)) {
    const left = maxTokens - estimateTokens(intro + block) - 8;
    if (left < MIN_EMAIL_TOKENS) break;
    block += `<tone_example>\n${truncateToTokens(example, left)}\n</tone_example>\n`;
  }
  return block ? intro + block.trimEnd() : '';
}

/**
 * The newest messages that fit `maxTokens`, oldest first, with a note of how many earlier ones were left
 * out. The newest message is always included, its body cut if it alone is too long.
 */
function threadBlock(thread: readonly EmailForPrompt[], maxTokens: number): { text: string; omitted: number } {
  const omissionNote = (n: number) => `[${n} earlier message${n === 1 ? '' : 's'} omitted to fit the token cap]\n`;
  // Reserve room for the note and the <thread> tags up front, so adding them never breaks the cap.
  let left = maxTokens - estimateTokens(omissionNote(thread.length) + '<thread>\n\n</thread>');
  const kept: string[] = [];
  for (let i = thread.length - 1; i >= 0; i--) {
    const attributes = ` index="${i + 1}"`;
    const block =
      kept.length === 0
        ? fitEmail(thread[i]!, 'message', attributes, left)
        : formatEmail(thread[i]!, 'message', attributes);
    if (block === null || estimateTokens(block + '\n') > left) break;
    kept.unshift(block);
    left -= estimateTokens(block + '\n');
  }
  if (kept.length === 0) return { text: '', omitted: thread.length };
  const omitted = thread.length - kept.length;
  return { text: `<thread>\n${omitted > 0 ? omissionNote(omitted) : ''}${kept.join('\n')}\n</thread>`, omitted };
}

export function buildDraftPrompt(input: DraftPromptInput): Prompt {
  if (input.thread.length === 0) throw new RangeError('draft prompt needs at least one message in the thread');
  const cap = input.maxInputTokens - SAFETY_MARGIN_TOKENS;
  const signature = input.signature?.trim()
    ? `\n\nEnd the reply with this signature, exactly:\n<signature>\n${truncateToTokens(input.signature.trim(), share(cap, 'signature'))}\n</signature>`
    : '';
  const system =
    "You write email replies on the user's behalf, in the user's voice. Write only the body of a reply to the " +
    'newest message in the thread: plain text, no subject line, no quoted text. Do not invent facts, dates or ' +
    'commitments; where the reply needs something only the user knows, say so briefly in the reply.' +
    signature +
    toneBlock(input.toneExamples, share(cap, 'toneExamples')) +
    instructionsBlock(input.instructions ?? [], share(cap, 'draftInstructions')) +
    lessonsBlock(input.lessons ?? [], share(cap, 'lessons'));

  const rework = input.reworkInstructions?.trim();
  const task = rework
    ? '\n\n' +
      (input.previousDraft?.trim()
        ? `<previous_draft>\n${truncateToTokens(input.previousDraft.trim(), share(cap, 'previousDraft'))}\n</previous_draft>\n`
        : '') +
      `<rework_instructions>\n${truncateToTokens(rework, share(cap, 'reworkInstructions'))}\n</rework_instructions>\n` +
      'Rewrite the previous draft of the reply to the newest message, applying the rework instructions.'
    : '\n\nWrite the reply to the newest message.';

  const thread = threadBlock(input.thread, cap - estimateTokens(system) - estimateTokens(task));
  if (thread.text === '') throw tooSmall(input.maxInputTokens);
  const user = thread.text + task;
  return { system, user, omittedMessages: thread.omitted, truncated: thread.omitted > 0 || wasCut(system, user) };
}
