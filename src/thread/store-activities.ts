// Postgres activities of the thread workflow: rules in, thread rows and the decision log out.
// Every write is idempotent (upsert by thread, decisions keyed by run id and sequence), so a
// retried activity changes nothing the first attempt already wrote.
import type { PrismaClient } from '../db/client.js';
import {
  applicableInstructions,
  BUILTIN_RULES,
  evaluateRules,
  InvalidRuleError,
  validateRule,
  type Rule,
} from '../rules/rules.js';
import { isCategory } from '../mail/types.js';
import { ruleFromRow, type RuleRow } from '../rules/rule-rows.js';
import { uuid7 } from '../db/uuid7.js';
import { loadCategoryActions, recordLifecycleActions } from '../actions/journal.js';
import { loadAgentProfile } from '../agent/profiles.js';
import { prismaExecutor } from '../quota/sql.js';
import { emailsHandled } from '../metrics/metrics.js';
import type { EmailForPrompt } from '../mail/types.js';
import type { RulesVerdict, StoreActivities } from './activity-contracts.js';
import { threadWorkflowId, type ThreadMemory, type ThreadState } from './contracts.js';

const SAVE_THREAD_SQL = `
WITH thread AS (
  INSERT INTO threads AS t (id, account_id, gmail_thread_id, state, category, confidence, draft_id,
    draft_message_id, draft_created_at, rework_count, handled_message_ids, last_message_id, last_run_id,
    closed_at, updated_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::text[], $12, $13,
    CASE WHEN $14::boolean THEN clock_timestamp() END, clock_timestamp())
  ON CONFLICT (account_id, gmail_thread_id) DO UPDATE SET
    state = EXCLUDED.state, category = EXCLUDED.category, confidence = EXCLUDED.confidence,
    draft_id = EXCLUDED.draft_id, draft_message_id = EXCLUDED.draft_message_id,
    draft_created_at = EXCLUDED.draft_created_at, rework_count = EXCLUDED.rework_count,
    handled_message_ids = EXCLUDED.handled_message_ids, last_message_id = EXCLUDED.last_message_id,
    last_run_id = EXCLUDED.last_run_id, closed_at = EXCLUDED.closed_at, updated_at = EXCLUDED.updated_at
  RETURNING t.id
)
INSERT INTO decisions (account_id, thread_id, run_id, seq, kind, source, model, tokens_in, tokens_out, detail)
SELECT $2, thread.id, $13, d.seq, d.kind, d.source::decision_source, d.model, d.tokens_in, d.tokens_out, d.detail
FROM thread, jsonb_to_recordset($15::jsonb)
  AS d(seq int, kind text, source text, model text, tokens_in int, tokens_out int, detail jsonb)
ON CONFLICT (run_id, seq) DO NOTHING`;

// Raw SQL on the per-email paths: Prisma's query building costs about a millisecond of the
// worker's main thread per query (docs/thread-workflow.md).
const ENABLED_RULES_SQL = `
SELECT id, scope::text AS scope, scope_ref AS "scopeRef", kind::text AS kind, conditions, action, instruction, priority, enabled, actions, route
FROM rules
WHERE enabled AND (scope <> 'account' OR scope_ref = $1)`;

const LOAD_THREAD_SQL = `
SELECT state, category, confidence, draft_id, draft_message_id, draft_created_at, rework_count, handled_message_ids
FROM threads
WHERE account_id = $1 AND gmail_thread_id = $2`;

interface ThreadRow {
  state: string;
  category: string | null;
  confidence: number | null;
  draft_id: string | null;
  draft_message_id: string | null;
  draft_created_at: Date | null;
  rework_count: number;
  handled_message_ids: string[];
}

function verdictOf(rules: Rule[], email: EmailForPrompt, accountId: string, categoryActions: RulesVerdict['categoryActions']): RulesVerdict {
  const instructions = applicableInstructions(rules, email, accountId);
  const verdict = evaluateRules(rules, email, accountId);
  if (!verdict.decided) return { decided: false, instructions, categoryActions };
  const rule = rules.find((r) => r.id === verdict.ruleId);
  return {
    decided: true,
    category: verdict.category,
    ruleId: verdict.ruleId,
    reason: verdict.reason,
    instructions,
    categoryActions,
    ...(rule?.actions ? { actions: rule.actions } : {}),
    ...(rule?.route ? { routeTo: rule.route } : {}),
  };
}

function partitionValid(rules: Rule[]): { usable: Rule[]; skipped: string[] } {
  const usable: Rule[] = [];
  const skipped: string[] = [];
  for (const rule of rules) {
    try {
      validateRule(rule);
      usable.push(rule);
    } catch (err) {
      if (!(err instanceof InvalidRuleError)) throw err;
      skipped.push(err.message);
    }
  }
  return { usable, skipped };
}

export function createStoreActivities(prisma: PrismaClient): StoreActivities {
  /** A routing rule's agent profile, loaded; a route to a profile that does not exist is left out, with why. */
  async function withRoute(verdict: RulesVerdict & { routeTo?: string }): Promise<RulesVerdict> {
    const { routeTo, ...rest } = verdict;
    if (!routeTo || !rest.decided) return rest;
    const profile = await loadAgentProfile(prismaExecutor(prisma), routeTo);
    if (profile) return { ...rest, route: profile };
    return { ...rest, skipped: [...(rest.skipped ?? []), `rule ${rest.ruleId} routes to agent profile "${routeTo}", which does not exist: classified without it`] };
  }

  return {
    async classifyByRules({ accountId, email }) {
      // Which domain and sender rules apply is decided by the domain module (subdomains, `@domain`,
      // case); here only other accounts' rules are left out.
      const [rows, categoryActions] = await Promise.all([
        prisma.$queryRawUnsafe<RuleRow[]>(ENABLED_RULES_SQL, accountId),
        loadCategoryActions(prismaExecutor(prisma), accountId),
      ]);
      const rules = [...BUILTIN_RULES, ...rows.map(ruleFromRow)];
      try {
        return await withRoute(verdictOf(rules, email, accountId, categoryActions));
      } catch (err) {
        if (!(err instanceof InvalidRuleError)) throw err;
        // A broken rule (edited by hand in SQL, say) must not hold up the mail: it is left out, and
        // the workflow records why in the thread's decision log.
        const { usable, skipped } = partitionValid(rules);
        return { ...(await withRoute(verdictOf(usable, email, accountId, categoryActions))), skipped };
      }
    },

    async loadThread({ accountId, threadId }) {
      const [row] = await prisma.$queryRawUnsafe<ThreadRow[]>(LOAD_THREAD_SQL, accountId, threadId);
      if (!row) return null;
      const memory: ThreadMemory = {
        state: row.state as ThreadState,
        category: row.category && isCategory(row.category) ? row.category : undefined,
        confidence: row.confidence ?? undefined,
        draftId: row.draft_id ?? undefined,
        draftMessageId: row.draft_message_id ?? undefined,
        draftCreatedAt: row.draft_created_at?.getTime(),
        reworkCount: row.rework_count,
        handledMessageIds: row.handled_message_ids,
      };
      return memory;
    },

    async saveThread({ accountId, threadId, workflowRunId, memory, closed, decisions, journal }) {
      if (journal && journal.length > 0) {
        await recordLifecycleActions(prismaExecutor(prisma), { accountId, threadId, workflowId: threadWorkflowId(accountId, threadId), actions: journal });
      }
      // One statement (the thread's hot path: once per handled event): upsert the row, append the
      // new decisions; a retried activity finds them by (run_id, seq) and adds nothing.
      await prisma.$executeRawUnsafe(
        SAVE_THREAD_SQL,
        uuid7(),
        accountId,
        threadId,
        memory.state,
        memory.category ?? null,
        memory.confidence ?? null,
        memory.draftId ?? null,
        memory.draftMessageId ?? null,
        memory.draftCreatedAt === undefined ? null : new Date(memory.draftCreatedAt),
        memory.reworkCount,
        memory.handledMessageIds,
        memory.handledMessageIds.at(-1) ?? null,
        workflowRunId,
        closed,
        JSON.stringify(
          decisions.map(({ seq, decision }) => ({
            seq,
            kind: decision.kind,
            source: decision.source,
            model: decision.model ?? null,
            tokens_in: decision.tokensIn ?? null,
            tokens_out: decision.tokensOut ?? null,
            detail: { text: decision.detail, ...(decision.ruleId ? { ruleId: decision.ruleId } : {}), at: decision.at },
          })),
        ),
      );
      // A save with new decisions is mail handled; the state it left the thread in is the outcome.
      if (decisions.length > 0) emailsHandled.inc({ outcome: memory.state });
    },
  };
}
