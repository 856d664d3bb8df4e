// One mailbox's change log: records in increasing (non-contiguous) id order, found by binary
// search, pruned by age. `floor` is the lowest start id that can still be answered completely:
// a start id below it gets Gmail's 404, and the client must fall back to a full sync.
import { badRequest, notFound } from './errors.js';

export type HistoryType = 'messageAdded' | 'messageDeleted' | 'labelAdded' | 'labelRemoved';

export const HISTORY_TYPES: readonly HistoryType[] = ['messageAdded', 'messageDeleted', 'labelAdded', 'labelRemoved'];

export interface HistoryRecord {
  id: number;
  /** Emulator clock time of the change (ms), for retention. */
  at: number;
  type: HistoryType;
  messageId: string;
  threadId: string;
  /** The message's labels just after the change. */
  labelIds: string[];
  /** For labelAdded/labelRemoved: the labels that changed. */
  changedLabelIds?: string[];
}

export interface HistoryQuery {
  startHistoryId: number;
  historyTypes?: HistoryType[];
  labelId?: string;
  maxResults: number;
  pageToken?: string;
}

export interface HistoryPage {
  records: HistoryRecord[];
  nextPageToken?: string;
}

export class HistoryLog {
  private records: HistoryRecord[] = [];
  /** Start ids below this were pruned (or never recorded, e.g. seeded mail). */
  floor: number;

  constructor(initialId: number) {
    this.floor = initialId;
  }

  get size(): number {
    return this.records.length;
  }

  snapshot(): { floor: number; records: HistoryRecord[] } {
    return { floor: this.floor, records: this.records };
  }

  restore(state: { floor: number; records: HistoryRecord[] }): void {
    this.floor = state.floor;
    this.records = state.records;
  }

  append(record: HistoryRecord): void {
    this.records.push(record);
  }

  /** Index of the first record with id > historyId. */
  private firstAfter(historyId: number): number {
    let lo = 0;
    let hi = this.records.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.records[mid] as HistoryRecord).id <= historyId) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Drops records older than `cutoffMs` and raises the floor past them. */
  pruneBefore(cutoffMs: number): void {
    let lo = 0;
    let hi = this.records.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.records[mid] as HistoryRecord).at < cutoffMs) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return;
    this.floor = Math.max(this.floor, (this.records[lo - 1] as HistoryRecord).id);
    this.records.splice(0, lo);
  }

  /** Forgets everything up to `currentId` (the control API's "expire history"). */
  expireAll(currentId: number): void {
    this.records = [];
    this.floor = Math.max(this.floor, currentId);
  }

  list(query: HistoryQuery): HistoryPage {
    if (query.startHistoryId < this.floor) throw notFound('Requested entity was not found.');
    let after = query.startHistoryId;
    if (query.pageToken) {
      const cursor = Number(Buffer.from(query.pageToken, 'base64url').toString('utf8'));
      if (!Number.isSafeInteger(cursor) || cursor < query.startHistoryId) throw badRequest('Invalid pageToken');
      if (cursor < this.floor) throw notFound('Requested entity was not found.');
      after = cursor;
    }
    const types = query.historyTypes && query.historyTypes.length > 0 ? new Set(query.historyTypes) : undefined;
    const records: HistoryRecord[] = [];
    for (let i = this.firstAfter(after); i < this.records.length; i++) {
      const record = this.records[i] as HistoryRecord;
      if (types && !types.has(record.type)) continue;
      if (query.labelId && !record.labelIds.includes(query.labelId) && !record.changedLabelIds?.includes(query.labelId)) continue;
      if (records.length === query.maxResults) {
        const last = records[records.length - 1] as HistoryRecord;
        return { records, nextPageToken: Buffer.from(String(last.id)).toString('base64url') };
      }
      records.push(record);
    }
    return { records };
  }
}
