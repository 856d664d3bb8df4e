// Gmail per-user quota profiles (see /work/shared/reference/gmail-api.md): the per-user unit budget
// and what each call costs. The limiter is sized from these; both profiles stay configurable
// because the 2026 figures come from secondary copies of Google's quota page. And the IMAP
// backfill's: a unit is one IMAP operation of ImapMailbox (reading a message, a page of a listing),
// the budget IMAP_BACKFILL_RATE (src/config/settings.ts imapBackfillLimiterOptions).

export type QuotaProfileName = 'legacy' | '2026' | 'imap';

export interface QuotaProfile {
  name: QuotaProfileName;
  /** Per-user budget, units per second (15,000/min legacy, 6,000/min for projects from May 2026). */
  unitsPerSecond: number;
  costs: Readonly<Record<string, number>>;
  /** What a method not in `costs` costs (default 5). */
  defaultCost?: number;
}

const LEGACY_COSTS: Record<string, number> = {
  getProfile: 1,
  'labels.list': 1,
  'settings.sendAs.list': 1,
  'labels.create': 5,
  'history.list': 2,
  'messages.list': 5,
  'messages.get': 5,
  'messages.modify': 5,
  'messages.trash': 5,
  'threads.trash': 10,
  'threads.untrash': 10,
  'messages.batchModify': 50,
  'messages.send': 100,
  'messages.insert': 25,
  'threads.get': 10,
  'threads.modify': 10,
  'drafts.create': 10,
  'drafts.get': 5,
  'drafts.list': 5,
  'drafts.update': 15,
  'drafts.delete': 10,
  'drafts.send': 100,
  watch: 100,
  stop: 50,
};

export const QUOTA_PROFILES: Readonly<Record<QuotaProfileName, QuotaProfile>> = {
  legacy: { name: 'legacy', unitsPerSecond: 250, costs: LEGACY_COSTS },
  '2026': {
    name: '2026',
    unitsPerSecond: 100,
    costs: { ...LEGACY_COSTS, 'messages.get': 20, 'threads.get': 40, 'drafts.get': 20 },
  },
  imap: { name: 'imap', unitsPerSecond: 20, costs: {}, defaultCost: 1 },
};

/** Units one call of `method` costs under `profile` (5 for a method we do not know). */
export function unitCost(profile: QuotaProfileName | QuotaProfile, method: string): number {
  const p = typeof profile === 'string' ? QUOTA_PROFILES[profile] : profile;
  return p.costs[method] ?? p.defaultCost ?? 5;
}

/** The profile's ceiling for reading messages one messages.get at a time, in messages per second. */
export function messageCeilingPerSecond(profile: QuotaProfileName): number {
  const p = QUOTA_PROFILES[profile];
  return p.unitsPerSecond / unitCost(p, 'messages.get');
}
