// The action journal in Postgres (table `actions`), and the settings the policy reads (tables
// `category_actions`, `safety_settings`). One home for its SQL: the thread's store activities, the
// Gmail action activities, the CLI and the approvals page all go through these functions.
// Every write is keyed (the action's idempotency key, or its id and the states it may leave), so a
// retried activity or a second click changes nothing twice.
import { uuid7 } from '../db/uuid7.js';
import { parseAddressList } from '../gmail/addresses.js';
import { CATEGORIES, type Category } from '../mail/types.js';
import { actionTransitions } from '../metrics/metrics.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { actionSpecsOf } from './action-specs.js';
import { actionKey, type ActionKind, type ActionReason, type ActionResult, type ActionSpec, type ActionState, type JournaledAction, type LifecycleAction, type ProposeActionsInput, type ProposedAction, SENDING_KINDS, type TimerJournalInput } from './contracts.js';
import { DEFAULT_SAFETY_POLICY, judge, type PolicyFacts, type SafetyPolicy } from './policy.js';

type ActionRow = {
  id: string;
  key: string;
  account_id: string;
  gmail_thread_id: string;
  message_id: string;
  workflow_id: string;
  kind: string;
  argument: string | null;
  reason: ActionReason;
  verdict: string;
  because: string[];
  state: ActionState;
  sender: string;
  recipients: string[] | null;
  subject: string;
  scheduled_for: Date | null;
  expires_at: Date | null;
  result: ActionResult | null;
  note: string | null;
  decided_by: string | null;
  created_at: Date;
  done_at: Date | null;
};

const COLUMNS = `id, key, account_id, gmail_thread_id, message_id, workflow_id, kind, argument, reason, verdict, because,
  state::text AS state, sender, recipients, subject, scheduled_for, expires_at, result, note, decided_by, created_at, done_at`;

function actionOf(row: ActionRow): JournaledAction {
  return {
    id: row.id,
    key: row.key,
    accountId: row.account_id,
    threadId: row.gmail_thread_id,
    messageId: row.message_id,
    workflowId: row.workflow_id,
    kind: row.kind as ActionKind,
    ...(row.argument !== null ? { argument: row.argument } : {}),
    reason: row.reason,
    verdict: row.verdict as JournaledAction['verdict'],
    because: row.because,
    state: row.state,
    sender: row.sender,
    recipients: row.recipients ?? [],
    subject: row.subject,
    ...(row.scheduled_for ? { scheduledFor: row.scheduled_for.toISOString() } : {}),
    ...(row.expires_at ? { expiresAt: row.expires_at.toISOString() } : {}),
    ...(row.note !== null ? { note: row.note } : {}),
    ...(row.decided_by !== null ? { decidedBy: row.decided_by } : {}),
    ...(row.result ? { result: row.result } : {}),
    createdAt: row.created_at.toISOString(),
    ...(row.done_at ? { doneAt: row.done_at.toISOString() } : {}),
  };
}

// ---- the policy's settings -------------------------------------------------------------------

/** The safety policy for an account: the defaults, then the global settings, then the account's. */
export async function loadSafetyPolicy(db: SqlExecutor, accountId: string): Promise<SafetyPolicy> {
  const rows = await db.query<{ scope_ref: string; settings: Partial<SafetyPolicy> }>(
    `SELECT scope_ref, settings FROM safety_settings WHERE scope_ref IN ('', $1) ORDER BY scope_ref`,
    [accountId],
  );
  return rows.reduce<SafetyPolicy>((policy, row) => ({ ...policy, ...row.settings }), { ...DEFAULT_SAFETY_POLICY });
}

/** Merges `patch` into the settings of a scope ('' for global, else an account id). */
export async function updateSafetySettings(db: SqlExecutor, scopeRef: string, patch: Partial<SafetyPolicy>): Promise<void> {
  await db.query(
    `INSERT INTO safety_settings (scope_ref, settings, updated_at) VALUES ($1, $2::jsonb, clock_timestamp())
     ON CONFLICT (scope_ref) DO UPDATE SET settings = safety_settings.settings || EXCLUDED.settings, updated_at = EXCLUDED.updated_at`,
    [scopeRef, JSON.stringify(patch)],
  );
}

/** What each category's mail gets, for an account: its own settings over the global ones. */
export async function loadCategoryActions(db: SqlExecutor, accountId: string): Promise<Record<Category, ActionSpec[]>> {
  const rows = await db.query<{ scope_ref: string; category: string; actions: unknown }>(
    `SELECT scope_ref, category, actions FROM category_actions WHERE scope_ref IN ('', $1) ORDER BY scope_ref`,
    [accountId],
  );
  const byCategory = Object.fromEntries(CATEGORIES.map((c) => [c, [] as ActionSpec[]])) as Record<Category, ActionSpec[]>;
  for (const row of rows) {
    if (!(CATEGORIES as readonly string[]).includes(row.category)) continue;
    try {
      byCategory[row.category as Category] = actionSpecsOf(row.actions);
    } catch {
      // A row edited by hand into something invalid: that category does nothing rather than guess.
      byCategory[row.category as Category] = [];
    }
  }
  return byCategory;
}

export async function setCategoryActions(db: SqlExecutor, scopeRef: string, category: Category, actions: ActionSpec[]): Promise<void> {
  await db.query(
    `INSERT INTO category_actions (scope_ref, category, actions, updated_at) VALUES ($1, $2, $3::jsonb, clock_timestamp())
     ON CONFLICT (scope_ref, category) DO UPDATE SET actions = EXCLUDED.actions, updated_at = EXCLUDED.updated_at`,
    [scopeRef, category, JSON.stringify(actions)],
  );
}

// ---- the facts the policy needs, from the journal ---------------------------------------------

async function policyFacts(
  db: SqlExecutor,
  accountId: string,
  sender: string,
  recipients: string[],
  earnedAfter: number,
): Promise<Omit<PolicyFacts, 'pausedByLabel'>> {
  const [sends] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM actions
     WHERE account_id = $1 AND kind = ANY($2::text[]) AND state IN ('scheduled', 'done')
       AND reason->>'source' <> 'user' AND updated_at > clock_timestamp() - interval '1 hour'`,
    [accountId, SENDING_KINDS],
  );
  const draftsSentUnedited: Record<string, number> = {};
  for (const address of recipients) draftsSentUnedited[address] = await uneditedStreak(db, accountId, address, earnedAfter);
  return { accountId, sender, recipients, sendsLastHour: sends?.n ?? 0, draftsSentUnedited };
}

/**
 * Earned autonomy, per recipient address: our latest drafts to it whose fate the sent detection saw,
 * the unbroken run of drafts sent unedited, newest first. A draft journaled before drafts recorded
 * their recipients counts for its sender.
 */
async function uneditedStreak(db: SqlExecutor, accountId: string, address: string, earnedAfter: number): Promise<number> {
  const drafts = await db.query<{ unedited: boolean }>(
    `SELECT (result->>'sentUnedited')::boolean AS unedited FROM actions
     WHERE account_id = $1 AND kind = 'draft' AND result ? 'sentUnedited'
       AND ($2 = ANY(recipients) OR (cardinality(recipients) = 0 AND sender = $2))
     ORDER BY updated_at DESC LIMIT $3`,
    [accountId, address, Math.max(earnedAfter, 1)],
  );
  const streak = drafts.findIndex((d) => !d.unedited);
  return streak < 0 ? drafts.length : streak;
}

/** Who an action sends to, as journaled: a forward its address, an auto-reply the reply's recipients. */
function recipientsOf(action: ProposedAction, replyRecipients: string[]): string[] {
  if (action.kind === 'forward') return action.argument ? [action.argument.trim().toLowerCase()] : [];
  // An unsubscribe by mail goes to the list's address (the caller's recipients).
  return action.kind === 'auto_reply' || action.kind === 'send_later' || action.kind === 'unsubscribe' ? replyRecipients : [];
}

// ---- writing the journal ----------------------------------------------------------------------

/**
 * Judges each proposed action by the safety policy and journals it with the verdict: queued (runs
 * now), awaiting approval (with its expiry) or refused. An action proposed again (a retry, a
 * redelivered message) finds its row by key and is returned as it stands.
 */
export async function proposeActions(db: SqlExecutor, input: ProposeActionsInput): Promise<JournaledAction[]> {
  const policy = await loadSafetyPolicy(db, input.accountId);
  const facts: PolicyFacts = {
    ...(await policyFacts(db, input.accountId, input.sender, input.recipients, policy.earnedAfter)),
    pausedByLabel: input.pausedByLabel,
  };
  const keys: string[] = [];
  for (const action of input.actions) {
    const key = actionKey({ accountId: input.accountId, threadId: input.threadId, messageId: input.messageId }, action);
    keys.push(key);
    let verdict = judge(action, facts, policy);
    if (input.sendsNeedApproval && verdict.outcome !== 'refused' && SENDING_KINDS.includes(action.kind)) {
      const because = verdict.outcome === 'run' ? [input.sendsNeedApproval] : [...verdict.because, input.sendsNeedApproval];
      verdict = { outcome: 'needs_approval', because };
    }
    const state: ActionState = verdict.outcome === 'run' ? 'queued' : verdict.outcome === 'refused' ? 'refused' : 'awaiting_approval';
    const inserted = await db.query(
      `INSERT INTO actions (id, key, account_id, gmail_thread_id, message_id, kind, argument, reason, verdict, because,
         state, sender, workflow_id, expires_at, result, note, recipients, subject, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10::text[], $11::action_state, $12, $13,
         CASE WHEN $11 = 'awaiting_approval' THEN clock_timestamp() + make_interval(secs => $14::float8 / 1000) END,
         $15::jsonb, $16, $17::text[], $18, clock_timestamp())
       ON CONFLICT (key) DO NOTHING
       RETURNING id`,
      [
        uuid7(),
        key,
        input.accountId,
        input.threadId,
        input.messageId,
        action.kind,
        action.argument ?? null,
        JSON.stringify(action.reason),
        verdict.outcome,
        verdict.because,
        state,
        input.sender,
        input.workflowId,
        input.approvalExpiryMs,
        action.result ? JSON.stringify(action.result) : null,
        state === 'refused' ? verdict.because.join('; ') : null,
        recipientsOf(action, input.recipients),
        input.subject ?? '',
      ],
    );
    if (inserted.length > 0) actionTransitions.inc({ kind: action.kind, state });
  }
  const byKey = await loadActionsByKey(db, keys);
  return keys.map((k) => byKey.get(k)!);
}

export interface ActionTransition {
  id: string;
  /** The states the action may leave; from any other state nothing changes. */
  from: readonly ActionState[];
  to: ActionState;
  note?: string;
  decidedBy?: string;
  /** Merged into the row's result. */
  result?: ActionResult;
  /** For `scheduled`: when the send goes out. */
  scheduledFor?: Date;
}

/**
 * Moves an action from one of `from` to `to`; returns the row and whether this call moved it (a
 * repeat of a transition already made returns the row with `moved: false`).
 */
export async function transitionAction(db: SqlExecutor, t: ActionTransition): Promise<{ action: JournaledAction; moved: boolean } | null> {
  const [moved] = await db.query<ActionRow>(
    `UPDATE actions SET state = $3::action_state, updated_at = clock_timestamp(),
       note = COALESCE($4, note), decided_by = COALESCE($5, decided_by),
       result = CASE WHEN $6::jsonb IS NULL THEN result ELSE COALESCE(result, '{}'::jsonb) || $6::jsonb END,
       scheduled_for = COALESCE($7, scheduled_for),
       done_at = CASE WHEN $3 = 'done' THEN clock_timestamp() ELSE done_at END
     WHERE id = $1 AND state::text = ANY($2::text[])
     RETURNING ${COLUMNS}`,
    [t.id, t.from, t.to, t.note ?? null, t.decidedBy ?? null, t.result ? JSON.stringify(t.result) : null, t.scheduledFor ?? null],
  );
  if (moved) {
    const action = actionOf(moved);
    // Recording a result in place (a Discord message id, a draft id) is no state change.
    if (!t.from.includes(t.to)) actionTransitions.inc({ kind: action.kind, state: action.state });
    return { action, moved: true };
  }
  const current = await loadAction(db, t.id);
  return current ? { action: current, moved: false } : null;
}

/** Journals lifecycle changes as done; a key written before gets the new result (a rework's new draft). */
export async function recordLifecycleActions(
  db: SqlExecutor,
  input: { accountId: string; threadId: string; workflowId: string; actions: LifecycleAction[] },
): Promise<void> {
  for (const a of input.actions) {
    const [row] = await db.query<{ inserted: boolean }>(
      `INSERT INTO actions (id, key, account_id, gmail_thread_id, message_id, kind, argument, reason, verdict, because,
         state, sender, workflow_id, result, recipients, updated_at, done_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, 'run', $9::text[], 'done', $10, $11, $12::jsonb, $13::text[], clock_timestamp(), clock_timestamp())
       ON CONFLICT (key) DO UPDATE SET result = COALESCE(actions.result, '{}'::jsonb) || EXCLUDED.result, updated_at = EXCLUDED.updated_at
       RETURNING (xmax = 0) AS inserted`,
      [
        uuid7(),
        a.key,
        input.accountId,
        input.threadId,
        a.messageId,
        a.kind,
        a.argument ?? null,
        JSON.stringify(a.reason),
        [a.reason.source === 'user' ? 'asked for by you' : a.reason.source === 'system' ? a.reason.why : `${a.kind} is not a dangerous action`],
        a.sender,
        input.workflowId,
        JSON.stringify(a.result),
        a.recipients ?? [],
      ],
    );
    if (row?.inserted) actionTransitions.inc({ kind: a.kind, state: 'done' });
  }
}

// ---- reading it -------------------------------------------------------------------------------

/** The journal rows with these idempotency keys (actionKey), by key; a key not journaled is absent. */
export async function loadActionsByKey(db: SqlExecutor, keys: string[]): Promise<Map<string, JournaledAction>> {
  const rows = await db.query<ActionRow>(`SELECT ${COLUMNS} FROM actions WHERE key = ANY($1::text[])`, [keys]);
  return new Map(rows.map((r) => [r.key, actionOf(r)]));
}

export async function loadAction(db: SqlExecutor, id: string): Promise<JournaledAction | null> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
  const [row] = await db.query<ActionRow>(`SELECT ${COLUMNS} FROM actions WHERE id = $1`, [id]);
  return row ? actionOf(row) : null;
}

export interface ActionFilter {
  accountId?: string;
  threadId?: string;
  states?: readonly ActionState[];
  since?: Date;
  limit?: number;
  /** Oldest first (default newest first). */
  ascending?: boolean;
}

export async function listActions(db: SqlExecutor, filter: ActionFilter = {}): Promise<JournaledAction[]> {
  const rows = await db.query<ActionRow>(
    `SELECT ${COLUMNS} FROM actions
     WHERE ($1::text IS NULL OR account_id = $1) AND ($2::text IS NULL OR gmail_thread_id = $2)
       AND ($3::text[] IS NULL OR state::text = ANY($3::text[])) AND ($4::timestamptz IS NULL OR created_at >= $4)
     ORDER BY created_at ${filter.ascending ? 'ASC' : 'DESC'}, id ${filter.ascending ? 'ASC' : 'DESC'}
     LIMIT $5`,
    [filter.accountId ?? null, filter.threadId ?? null, filter.states ?? null, filter.since ?? null, filter.limit ?? 100],
  );
  return rows.map(actionOf);
}

// ---- the thread's timers ----------------------------------------------------------------------

/**
 * Journals a timer as a scheduled action (scheduled_for: when it fires); returns its id. A retry, or
 * the same request again, finds the row by key and returns it as it stands.
 */
export async function journalTimer(db: SqlExecutor, input: TimerJournalInput): Promise<JournaledAction> {
  const key = actionKey({ accountId: input.accountId, threadId: input.threadId, messageId: input.requestId }, { kind: input.kind });
  const inserted = await db.query(
    `INSERT INTO actions (id, key, account_id, gmail_thread_id, message_id, kind, reason, verdict, because,
       state, sender, workflow_id, scheduled_for, note, subject, recipients, decided_by, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, 'run', $8::text[], 'scheduled', '', $9, $10, $11, $12, $13::text[], $14, clock_timestamp())
     ON CONFLICT (key) DO NOTHING
     RETURNING id`,
    [
      uuid7(),
      key,
      input.accountId,
      input.threadId,
      input.requestId,
      input.kind,
      JSON.stringify(input.reason),
      [input.reason.source === 'system' ? input.reason.why : 'asked for by you'],
      input.workflowId,
      new Date(input.atMs),
      input.note ?? null,
      input.about?.subject ?? '',
      parseAddressList(input.about?.to).map((a) => a.address),
      input.decidedBy ?? null,
    ],
  );
  if (inserted.length > 0) actionTransitions.inc({ kind: input.kind, state: 'scheduled' });
  const [row] = await db.query<ActionRow>(`SELECT ${COLUMNS} FROM actions WHERE key = $1`, [key]);
  return actionOf(row!);
}

/**
 * The follow-ups of threads still awaiting an answer (the approvals page's list): each thread's
 * newest, waiting (scheduled) or fallen due (done: the thread has the Follow Up label), soonest first.
 * A cancelled one (undone), or a thread the answer reached, is not listed.
 */
export async function listFollowUps(db: SqlExecutor, limit = 200): Promise<JournaledAction[]> {
  const rows = await db.query<ActionRow>(
    `SELECT ${COLUMNS} FROM (
       SELECT DISTINCT ON (a.account_id, a.gmail_thread_id) a.* FROM actions a
       JOIN threads t ON t.account_id = a.account_id AND t.gmail_thread_id = a.gmail_thread_id
       WHERE a.kind = 'follow_up' AND t.state = 'awaiting_reply'
       ORDER BY a.account_id, a.gmail_thread_id, a.created_at DESC, a.id DESC
     ) latest
     WHERE state IN ('scheduled', 'done')
     ORDER BY scheduled_for, id
     LIMIT $1`,
    [limit],
  );
  return rows.map(actionOf);
}

/** When the account's unsubscribe from this sender (a canonical address) was last carried out, if ever. */
export async function lastUnsubscribed(db: SqlExecutor, accountId: string, sender: string): Promise<Date | undefined> {
  const [row] = await db.query<{ done_at: Date }>(
    `SELECT done_at FROM actions WHERE account_id = $1 AND kind = 'unsubscribe' AND state = 'done' AND sender = $2 AND done_at IS NOT NULL
     ORDER BY done_at DESC LIMIT 1`,
    [accountId, sender],
  );
  return row?.done_at;
}
