// Real mail at volume, in `npm test`: 200 messages of the SpamAssassin public corpus (chosen
// deterministically, spread over easy ham, hard ham and spam; bench/corpus/spam-assassin.ts) delivered
// raw into the Gmail emulator and through the real path. None may fail, all must settle. The whole
// corpus runs in `npm run bench -- corpus`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';
import { awaitSettled, isSettled, type ThreadOutcome, type TrackedThread } from '../../bench/corpus/settle.js';
import { readSpamAssassin, sampleSpamAssassin, SPAM_ASSASSIN_GROUPS } from '../../bench/corpus/spam-assassin.js';

const SAMPLE = 200;
const sample = sampleSpamAssassin(SAMPLE);

let h: InboxHarness;
const refused: string[] = [];
let outcomes: ThreadOutcome[] = [];

beforeAll(async () => {
  // 200 messages into one mailbox within a minute: the default daily LLM budget could pause the model.
  h = await startInboxHarness({ env: { DAILY_TOKEN_BUDGET: String(100_000_000) } });
  await h.startWorkers();
  const tracked = new Map<string, TrackedThread>();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < sample.length) {
        const entry = sample[next++]!;
        try {
          const deliveredAt = Date.now();
          const { threadId } = await deliverAndIngest(h, {
            from: '',
            raw: readSpamAssassin(entry).toString('base64url'),
          });
          // Corpus messages that reply to each other share a thread (and its workflow).
          if (!tracked.has(threadId))
            tracked.set(threadId, { label: entry.name, accountId: h.accountId, threadId, deliveredAt });
        } catch (err) {
          refused.push(`${entry.name}: ${(err as Error).message}`);
        }
      }
    }),
  );
  outcomes = await awaitSettled(h, [...tracked.values()], { timeoutMs: 150_000 });
}, 240_000);

afterAll(async () => {
  await h?.close();
});

describe('a SpamAssassin sample through the real path', () => {
  it('is spread over every group of the corpus', () => {
    expect(sample).toHaveLength(SAMPLE);
    for (const group of SPAM_ASSASSIN_GROUPS)
      expect(sample.filter((e) => e.group === group).length).toBeGreaterThanOrEqual(SAMPLE / 5 - 1);
  });

  it('delivers every message, fails no thread workflow and settles every thread', async () => {
    expect(refused).toEqual([]);
    const failed = outcomes.filter((o) => o.failed).map((o) => `${o.label}: ${o.failed}`);
    expect(failed).toEqual([]);
    const unsettled = outcomes
      .filter((o) => !isSettled(o))
      .map((o) => `${o.label}: ${o.state ?? 'no thread row'}; ${o.stuck ?? ''}`);
    expect(unsettled).toEqual([]);
    expect(outcomes.length).toBeGreaterThan(SAMPLE / 2);
    // Temporal's own word, thread by thread: running (waiting on the user) or completed, never failed.
    const statuses = await Promise.all(outcomes.map(async (o) => (await h.handle(o.threadId).describe()).status.name));
    expect(statuses.filter((s) => s !== 'RUNNING' && s !== 'COMPLETED')).toEqual([]);
  });
});
