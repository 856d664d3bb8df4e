// Message Batches (POST /v1/messages/batches and its siblings): a batch holds its requests while it is
// `in_progress`, and answers them all when it ends (after the configured processing time, at 24 h as
// expired, or at once when cancelled); its results are then a JSONL file, one line per custom_id
// (platform.claude.com/docs/en/build-with-claude/batch-processing; the SDK's batches.d.ts).
import { makeId } from './random.js';

const DAY_MS = 24 * 3600_000;
/** The batch-processing page: up to 100,000 requests per batch. */
export const MAX_BATCH_REQUESTS = 100_000;
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

export type BatchResult =
  | { type: 'succeeded'; message: unknown }
  | { type: 'errored'; error: { type: 'error'; error: { type: string; message: string }; request_id: string | null } }
  | { type: 'canceled' }
  | { type: 'expired' };

interface StoredBatch {
  id: string;
  createdAt: number;
  endsAt: number;
  requests: { custom_id: string; params: unknown }[];
  status: 'in_progress' | 'canceling' | 'ended';
  cancelInitiatedAt?: number;
  endedAt?: number;
  results?: { custom_id: string; result: BatchResult }[];
}

/** What answering one request gives: a Message, or an error as the Messages API would have sent it. */
export type BatchAnswer = (params: unknown) => Promise<BatchResult>;

export class BatchBook {
  private readonly batches = new Map<string, StoredBatch>();
  private counter = 0;
  /** Batches created and requests received in them (reset() zeroes them, keeps the batches). */
  created = 0;
  requests = 0;

  constructor(private readonly seed: () => number) {}

  /** Checks the body (requests, custom_ids); the params are checked when the batch is processed, as the API does. */
  create(body: unknown, processingMs: number, now = Date.now()): { ok: true; batch: StoredBatch } | { ok: false; message: string } {
    const requests = (body as { requests?: unknown } | null)?.requests;
    if (!Array.isArray(requests)) return { ok: false, message: 'requests: Field required' };
    if (requests.length === 0) return { ok: false, message: 'requests: List should have at least 1 item after validation, not 0' };
    if (requests.length > MAX_BATCH_REQUESTS) return { ok: false, message: `requests: List should have at most ${MAX_BATCH_REQUESTS} items after validation, not ${requests.length}` };
    const seen = new Set<string>();
    for (const [i, r] of requests.entries()) {
      const { custom_id: customId, params } = (r ?? {}) as { custom_id?: unknown; params?: unknown };
      if (typeof customId !== 'string') return { ok: false, message: `requests.${i}.custom_id: Field required` };
      if (!CUSTOM_ID.test(customId)) return { ok: false, message: `requests.${i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'` };
      if (seen.has(customId)) return { ok: false, message: `requests.${i}.custom_id: custom_id must be unique within a batch; '${customId}' is repeated` };
      seen.add(customId);
      if (typeof params !== 'object' || params === null) return { ok: false, message: `requests.${i}.params: Field required` };
    }
    const batch: StoredBatch = {
      id: makeId('msgbatch', this.seed(), `batch:${++this.counter}:${now}`),
      createdAt: now,
      endsAt: now + Math.min(processingMs, DAY_MS),
      requests: requests as StoredBatch['requests'],
      status: 'in_progress',
    };
    this.batches.set(batch.id, batch);
    this.created++;
    this.requests += requests.length;
    return { ok: true, batch };
  }

  /** The batch as it stands now: one whose time has come is processed first (results answered, or expired at 24 h). */
  async get(id: string, answer: BatchAnswer, now = Date.now()): Promise<StoredBatch | undefined> {
    const batch = this.batches.get(id);
    if (batch && batch.status !== 'ended' && now >= batch.endsAt) await this.end(batch, answer, now);
    return batch;
  }

  /** Newest first, as the list endpoint returns them. */
  async list(answer: BatchAnswer, now = Date.now()): Promise<StoredBatch[]> {
    const all = [...this.batches.values()].sort((a, b) => b.createdAt - a.createdAt);
    for (const b of all) await this.get(b.id, answer, now);
    return all;
  }

  /** Cancelling ends the batch at once here: every request not yet processed (all of them) is canceled. */
  async cancel(id: string, answer: BatchAnswer, now = Date.now()): Promise<StoredBatch | undefined> {
    const batch = await this.get(id, answer, now);
    if (!batch || batch.status === 'ended') return batch;
    batch.cancelInitiatedAt = now;
    batch.status = 'canceling';
    batch.results = batch.requests.map((r) => ({ custom_id: r.custom_id, result: { type: 'canceled' } }));
    batch.status = 'ended';
    batch.endedAt = now;
    return batch;
  }

  /** Ends every batch in progress now (tests and demos: "processing took this long"). */
  async endAll(answer: BatchAnswer, now = Date.now()): Promise<number> {
    let ended = 0;
    for (const batch of this.batches.values()) {
      if (batch.status === 'ended') continue;
      batch.endsAt = now;
      await this.end(batch, answer, now);
      ended++;
    }
    return ended;
  }

  resetCounters(): void {
    this.created = 0;
    this.requests = 0;
  }

  private async end(batch: StoredBatch, answer: BatchAnswer, now: number): Promise<void> {
    const expired = now >= batch.createdAt + DAY_MS;
    const results: StoredBatch['results'] = [];
    for (const r of batch.requests) results.push({ custom_id: r.custom_id, result: expired ? { type: 'expired' } : await answer(r.params) });
    // Another caller may have ended it while this one answered.
    if (batch.status === 'ended') return;
    batch.results = results;
    batch.status = 'ended';
    batch.endedAt = now;
  }
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** The MessageBatch object; `resultsUrl` is where the results are once it ended. */
export function batchObject(batch: StoredBatch, resultsUrl: string): Record<string, unknown> {
  const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
  if (batch.results) for (const r of batch.results) counts[r.result.type]++;
  else counts.processing = batch.requests.length;
  return {
    id: batch.id,
    type: 'message_batch',
    processing_status: batch.status,
    request_counts: counts,
    ended_at: iso(batch.endedAt),
    created_at: iso(batch.createdAt),
    expires_at: iso(batch.createdAt + DAY_MS),
    archived_at: null,
    cancel_initiated_at: iso(batch.cancelInitiatedAt),
    results_url: batch.status === 'ended' ? resultsUrl : null,
  };
}

/** The results file: one JSON line per request, in the order of the requests (the API does not promise one). */
export function resultsJsonl(batch: StoredBatch): string {
  return (batch.results ?? []).map((r) => JSON.stringify(r)).join('\n') + '\n';
}
