import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EmailForPrompt } from '../../src/mail/types.js';
import { buildClassificationPrompt, buildDraftPrompt, estimateTokens } from '../../src/llm/index.js';
import { MAX_PROMPT_HEADER_CHARS } from '../../src/llm/prompts.js';
import { email } from '../helpers/llm-fixtures.js';

const emailArb: fc.Arbitrary<EmailForPrompt> = fc.record({
  from: fc.string({ maxLength: 80 }),
  to: fc.string({ maxLength: 80 }),
  subject: fc.string({ maxLength: 200 }),
  date: fc.constant('Mon, 3 Mar 2025 10:00:00 +0000'),
  body: fc.string({ maxLength: 20_000 }),
  headers: fc.constant({}),
});

describe('prompt building', () => {
  it('the classification prompt never exceeds the cap', () => {
    fc.assert(
      fc.property(
        emailArb,
        fc.array(fc.string({ maxLength: 2000 }), { maxLength: 5 }),
        fc.integer({ min: 600, max: 8000 }),
        (e, instructions, cap) => {
          const prompt = buildClassificationPrompt({
            email: e,
            instructions,
            maxInputTokens: cap,
            reservedTokens: 100,
          });
          expect(estimateTokens(prompt.system) + estimateTokens(prompt.user) + 100).toBeLessThanOrEqual(cap);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('the draft prompt never exceeds the cap and always holds the newest message', () => {
    fc.assert(
      fc.property(
        fc.array(emailArb, { minLength: 1, maxLength: 12 }),
        fc.array(fc.string({ maxLength: 3000 }), { maxLength: 4 }),
        fc.option(fc.string({ maxLength: 5000 }), { nil: undefined }),
        fc.integer({ min: 1500, max: 12_000 }),
        (thread, toneExamples, previousDraft, cap) => {
          const prompt = buildDraftPrompt({
            thread,
            toneExamples,
            previousDraft,
            reworkInstructions: previousDraft === undefined ? undefined : 'shorter',
            signature: 'Me',
            maxInputTokens: cap,
          });
          expect(estimateTokens(prompt.system) + estimateTokens(prompt.user)).toBeLessThanOrEqual(cap);
          expect(prompt.user).toContain(`<message index="${thread.length}">`);
          expect(prompt.omittedMessages).toBeLessThan(thread.length);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('leaves short input untouched', () => {
    const prompt = buildClassificationPrompt({
      email: email({ body: 'Short.' }),
      instructions: ['Be strict.'],
      maxInputTokens: 4000,
    });
    expect(prompt.truncated).toBe(false);
    expect(prompt.user).toBe(
      'Classify this email.\n\n<email>\nFrom: Jane Doe <jane@example.com>\nTo: me@mydomain.test\nDate: Mon, 3 Mar 2025 10:00:00 +0000\nSubject: Project update\n\nShort.\n</email>',
    );
    expect(prompt.system).toContain('- needs_response: ');
    expect(prompt.system).toContain('- Be strict.');
  });

  it('cuts very long headers instead of refusing the email (a 100 kB From, To or Subject)', () => {
    const long = email({
      from: `"${'A'.repeat(100_000)}" <crafted@long.example>`,
      to: 'r@x.example, '.repeat(6000),
      subject: 'word '.repeat(8000),
      body: 'Can you call me?',
    });
    const classification = buildClassificationPrompt({
      email: long,
      instructions: [],
      maxInputTokens: 8000,
      reservedTokens: 300,
    });
    expect(estimateTokens(classification.system) + estimateTokens(classification.user) + 300).toBeLessThanOrEqual(8000);
    expect(classification.user).toContain('Can you call me?');
    expect(classification.user).toContain(`From: "${'A'.repeat(MAX_PROMPT_HEADER_CHARS - 1)} [header cut]`);
    expect(classification.truncated).toBe(true);
    const draft = buildDraftPrompt({ thread: [long], toneExamples: [], maxInputTokens: 8000 });
    expect(draft.user).toContain('Can you call me?');
    expect(draft.truncated).toBe(true);
  });

  it('refuses a cap too small to hold even one email', () => {
    expect(() => buildDraftPrompt({ thread: [email()], toneExamples: [], maxInputTokens: 100 })).toThrow(RangeError);
    expect(() => buildClassificationPrompt({ email: email(), instructions: [], maxInputTokens: 100 })).toThrow(
      RangeError,
    );
  });
});
