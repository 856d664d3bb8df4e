// The emulator's "model": deterministic answers computed from the email in the prompt, so tests can
// assert outcomes. It reads the prompt conventions of src/llm/prompts.ts: the newest email is
// the last <email> or <message> block ("Header: value" lines, a blank line, the body); a rework comes as
// <rework_instructions>, the signature as <signature>. Any other prompt is read as one email body.
import { inGerman, leftOut, lessonsInPrompt } from './learning.js';
import type { JsonSchema, ToolDefinition } from './validation.js';

export interface EmailView {
  from: string;
  subject: string;
  body: string;
}

export interface Decision {
  category: string;
  confidence: number;
  reason: string;
}

const EMAIL_BLOCK = /<(email|message)\b[^>]*>([\s\S]*?)<\/\1>/g;

/** The newest email in the prompt text. */
export function newestEmail(promptText: string): EmailView {
  const blocks = [...promptText.matchAll(EMAIL_BLOCK)];
  const last = blocks.at(-1)?.[2];
  if (last === undefined) return { from: '', subject: '', body: promptText };
  const text = last.replace(/^\n/, '');
  const split = text.indexOf('\n\n');
  const head = split < 0 ? text : text.slice(0, split);
  const body = split < 0 ? '' : text.slice(split + 2);
  const header = (name: string) => new RegExp(`^${name}:[ \\t]*(.*)$`, 'mi').exec(head)?.[1]?.trim() ?? '';
  return { from: header('From'), subject: header('Subject'), body: body.trim() };
}

function block(promptText: string, tag: string): string | undefined {
  return new RegExp(`<${tag}>\\n?([\\s\\S]*?)\\n?</${tag}>`).exec(promptText)?.[1]?.trim();
}

/** First rule that fires wins; the order puts the cheap, unambiguous signals before "has a question". */
const KEYWORD_RULES: ReadonlyArray<{ category: string; confidence: number; keywords: readonly string[] }> = [
  {
    category: 'newsletter',
    confidence: 0.95,
    keywords: ['unsubscribe', 'newsletter', 'view in browser', 'view this email in your browser', 'weekly digest'],
  },
  {
    category: 'automated',
    confidence: 0.95,
    keywords: ['invoice', 'receipt', 'notification', 'order confirmation', 'password reset', 'verification code'],
  },
  {
    category: 'cold_outreach',
    confidence: 0.85,
    keywords: [
      'i came across your',
      'book a demo',
      'partnership opportunity',
      "i'd love to show you",
      'quick intro call',
    ],
  },
  {
    category: 'needs_response',
    confidence: 0.9,
    keywords: ['?', 'can you', 'could you', 'would you', 'please', 'let me know'],
  },
];

/** The cold-email gate's hint in the user's instructions (src/rules/cold-email.ts firstContactInstruction). */
const FIRST_CONTACT_HINT = /Cold-email check: the user has never exchanged mail with this sender/;
const FIRST_CONTACT_PITCH = /\b(?:call|demo|meeting|chat|connect)\b/;

const FORCED_CATEGORY = /\[emulator:category=([a-z_]+)\]/;

/**
 * Classification by keywords of the newest email (subject and body). A `[emulator:category=X]` marker
 * anywhere in the prompt (say, in a user instruction) forces X, to show that instructions reach the model.
 */
export function classify(promptText: string, email: EmailView): Decision {
  const forced = FORCED_CATEGORY.exec(promptText)?.[1];
  if (forced) return { category: forced, confidence: 0.99, reason: `Instructed to use ${forced}.` };
  const text = `${email.subject}\n${email.body}`.toLowerCase();
  const firstContact = FIRST_CONTACT_HINT.test(promptText);
  for (const rule of KEYWORD_RULES) {
    // As a model would: a stranger asking for the user's time is a pitch, not a question to answer.
    const pitch = rule.category === 'needs_response' && firstContact ? FIRST_CONTACT_PITCH.exec(text)?.[0] : undefined;
    if (pitch) return { category: 'cold_outreach', confidence: 0.85, reason: `First contact asking for "${pitch}".` };
    const keyword = rule.keywords.find((k) => text.includes(k));
    if (keyword) {
      return {
        category: rule.category,
        confidence: rule.confidence,
        reason: `The newest message contains "${keyword}".`,
      };
    }
  }
  return {
    category: 'fyi',
    confidence: 0.6,
    reason: 'No question, request or bulk-mail signal in the newest message.',
  };
}

/** The classification as a schema-violating tool input, for the `[emulator:invalid-output]` marker. */
export function invalidDecision(): Record<string, unknown> {
  return { category: 'banana', confidence: 7, reason: '' };
}

/**
 * A tool input that fits the tool's input_schema, filled from the decision by property name: an enum
 * takes the category when it offers it, `confidence`-like numbers the confidence, `reason`-like strings
 * the reason. Works for our classify tool and reasonably for any other simple schema.
 */
export function toolInput(tool: ToolDefinition, decision: Decision): unknown {
  return valueFor('', tool.input_schema, decision);
}

function valueFor(name: string, schema: JsonSchema, decision: Decision): unknown {
  const alternative = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (alternative) return valueFor(name, alternative, decision);
  if (schema.enum) return schema.enum.includes(decision.category) ? decision.category : schema.enum[0];
  switch (schema.type) {
    case 'object': {
      const properties = schema.properties ?? {};
      const keys = schema.required ?? Object.keys(properties);
      return Object.fromEntries(keys.map((key) => [key, valueFor(key, properties[key] ?? {}, decision)]));
    }
    case 'array':
      return (schema.minItems ?? 0) > 0 && schema.items ? [valueFor(name, schema.items, decision)] : [];
    case 'number':
    case 'integer': {
      const wanted = /confidence|score|probability/i.test(name) ? decision.confidence : 0;
      const clamped = Math.min(schema.maximum ?? Infinity, Math.max(schema.minimum ?? -Infinity, wanted));
      return schema.type === 'integer' ? Math.round(clamped) : clamped;
    }
    case 'boolean':
      return false;
    default: {
      const text = /category|label|class/i.test(name)
        ? decision.category
        : /reason|explanation|rationale|why/i.test(name)
          ? decision.reason
          : `emulated ${name || 'value'}`;
      return text.padEnd(schema.minLength ?? 0, '.').slice(0, schema.maxLength ?? Infinity);
    }
  }
}

function firstName(from: string): string {
  const display = from
    .replace(/<[^>]*>/, '')
    .replace(/"/g, '')
    .trim();
  const source = display.includes('@') || display === '' ? (/<?([^@<\s]+)@/.exec(from)?.[1] ?? '') : display;
  // "Doe, Jane" puts the given name last.
  const given = source.includes(',') ? source.split(',')[1]!.trim() : source;
  const word = given.split(/[\s._-]+/)[0] ?? '';
  return word ? word[0]!.toUpperCase() + word.slice(1) : 'there';
}

/**
 * A plain-text reply that quotes the subject, and visibly applies rework instructions
 * ("Revised as asked: <instruction>", one line per instruction line).
 */
export function draft(promptText: string, email: EmailView): string {
  const subject = email.subject.replace(/^(?:re|fwd?|aw):\s*/i, '') || 'your message';
  const asks = /\?|can you|could you|would you|please|let me know/i.test(`${email.subject}\n${email.body}`);
  const rework = (block(promptText, 'rework_instructions') ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  // Accepted writing lessons in the prompt take hold (learning.ts): the greeting, the sign-off, the
  // lines or sentences left out, the lines added before the sign-off, the body's language.
  const lessons = lessonsInPrompt(promptText);
  const lines = [
    `${lessons.openWith ?? 'Hi'} ${firstName(email.from)},`,
    '',
    `Thank you for your email about "${subject}". ` +
      (asks
        ? 'I have read your request and will come back to you with the details shortly.'
        : 'Thanks for letting me know.'),
  ];
  if (rework.length > 0) lines.push('', ...rework.map((instruction) => `Revised as asked: ${instruction}`));
  for (const line of lessons.addLines) lines.push('', line);
  lines.push('', lessons.closeWith ?? block(promptText, 'signature') ?? 'Best regards');
  const kept = lines.flatMap((line) => (line === '' ? [line] : (leftOut(line, lessons.leaveOut) ?? [])));
  // The body in the lesson's language (the German it knows), after what is left out, as a user rewrites it.
  const german = lessons.language === 'German';
  return kept.map((line, i) => (german && i > 0 && i < kept.length - 1 ? inGerman(line) : line)).join('\n');
}

/**
 * Whether the user's sent email (the newest in the prompt) expects an answer, for the follow-up's
 * tool: a question or a request does, anything else does not. `[emulator:expects-reply=no]` in the
 * email forces no (and `=yes` yes).
 */
export function expectsReply(email: EmailView): { expectsReply: boolean; reason: string } {
  const text = `${email.subject}\n${email.body}`;
  const forced = /\[emulator:expects-reply=(yes|no)\]/.exec(text)?.[1];
  if (forced) return { expectsReply: forced === 'yes', reason: `Instructed: ${forced}.` };
  const asks = /\?|can you|could you|would you|please|let me know/i.exec(text);
  return asks
    ? { expectsReply: true, reason: `The email asks something ("${asks[0]}").` }
    : { expectsReply: false, reason: 'No question or request in the email.' };
}
