import { describe, expect, it } from 'vitest';
import { extractReworkInstructions } from '../../src/thread/rework.js';
import { LlmOutputInvalidError, draftReply } from '../../src/llm/index.js';
import { MODEL, email, useEmulator } from '../helpers/llm-fixtures.js';

const { emulator, client } = useEmulator();

const thread = [
  email({ from: 'Me <me@mydomain.test>', subject: 'Q3 report', body: 'Here is the Q3 report draft.' }),
  email({
    from: '"Doe, Jane" <jane@example.com>',
    subject: 'Re: Q3 report',
    body: 'Thanks! Can you add the marketing numbers?',
  }),
];

describe('draftReply over the real SDK and the emulator', () => {
  it('writes a plain-text reply to the newest message that quotes its subject', async () => {
    const out = await draftReply(client(), {
      model: MODEL,
      thread,
      toneExamples: ['Hi Tom, sure thing. Cheers, Me'],
      signature: 'Cheers,\nMe',
      maxInputTokens: 8000,
    });
    expect(out.body).toContain('Hi Jane,');
    expect(out.body).toContain('"Q3 report"');
    expect(out.body.endsWith('Cheers,\nMe')).toBe(true);
    expect(out.body).not.toContain('Revised as asked');
    expect(out).toMatchObject({ model: MODEL, omittedMessages: 0, promptTruncated: false });
    expect(out.tokensIn).toBe(emulator().lastRequest()!.inputTokens);
    expect(out.tokensOut).toBeGreaterThan(0);

    const sent = emulator().lastRequest()!.body;
    expect(sent.tools).toBeUndefined();
    expect(sent.system).toContain('<tone_example>\nHi Tom, sure thing. Cheers, Me\n</tone_example>');
    expect(emulator().metrics()).toMatchObject({ textResponses: 1, toolUseResponses: 0 });
  });

  it('a rework applies the instructions the user typed into the draft', async () => {
    const first = await draftReply(client(), { model: MODEL, thread, toneExamples: [], maxInputTokens: 8000 });
    const edited = `Make it shorter\nMention the numbers come on Friday\n\n${first.body}`;
    const { instructions } = extractReworkInstructions(edited, first.body);
    expect(instructions).toBe('Make it shorter\nMention the numbers come on Friday');

    const second = await draftReply(client(), {
      model: MODEL,
      thread,
      toneExamples: [],
      previousDraft: first.body,
      reworkInstructions: instructions!,
      maxInputTokens: 8000,
    });
    expect(second.body).toContain('Revised as asked: Make it shorter');
    expect(second.body).toContain('Revised as asked: Mention the numbers come on Friday');
    const prompt = JSON.stringify(emulator().lastRequest()!.body.messages);
    expect(prompt).toContain('<previous_draft>');
    expect(prompt).toContain('<rework_instructions>');
  });

  it('keeps the newest messages of a long thread within the token cap and marks the cut', async () => {
    const cap = 3000;
    const long = Array.from({ length: 40 }, (_, i) =>
      email({
        from: i % 2 ? 'Jane <jane@example.com>' : 'Me <me@mydomain.test>',
        subject: 'Re: Budget',
        body: `Message ${i + 1}. ` + 'Some long discussion about the budget. '.repeat(30),
      }),
    );
    long.push(
      email({ from: 'Jane <jane@example.com>', subject: 'Re: Budget', body: 'Final question: can you approve it?' }),
    );

    const out = await draftReply(client(), { model: MODEL, thread: long, toneExamples: [], maxInputTokens: cap });
    const received = emulator().lastRequest()!;
    expect(received.inputTokens).toBeLessThanOrEqual(cap);
    expect(out.omittedMessages).toBeGreaterThan(30);
    expect(out.omittedMessages).toBeLessThan(41);
    expect(out.promptTruncated).toBe(true);
    const user = JSON.stringify(received.body.messages);
    expect(user).toContain(`[${out.omittedMessages} earlier messages omitted to fit the token cap]`);
    expect(user).toContain('Final question: can you approve it?');
    expect(user).toContain('index=\\"41\\"');
    expect(user).not.toContain('index=\\"1\\"');
    expect(out.body).toContain('I have read your request');
  });

  it('an empty reply is an LlmOutputInvalidError', async () => {
    const err = await draftReply(client(), {
      model: MODEL,
      thread: [email({ body: 'Hello [emulator:invalid-output]' })],
      toneExamples: [],
      maxInputTokens: 8000,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmOutputInvalidError);
    expect((err as LlmOutputInvalidError).field).toBe('body');
  });

  it('a reply cut off at max_tokens is never returned', async () => {
    await expect(
      draftReply(client(), { model: MODEL, thread, toneExamples: [], maxInputTokens: 8000, maxOutputTokens: 5 }),
    ).rejects.toThrow(/cut off at max_tokens/);
  });
});
