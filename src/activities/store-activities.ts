// Postgres activities of the thread workflow: rules in, thread rows and the decision log out.
// Every write is idempotent (upsert by thread, decisions keyed by run id and sequence), so a
// retried activity changes nothing the first attempt already wrote.
import { ApplicationFailure } from '@temporalio/activity';
import type { PrismaClient } from '../db/client.js';
import { applicableInstructions, BUILTIN_RULES, evaluateRules, InvalidRuleError, type Rule } from '../domain/rules.js';
import { isCategory } from '../domain/types.js';
import type { StoreActivities } from './thread-contracts.js';
import type { ThreadMemory, ThreadState } from '../workflows/thread/types.js';

type RuleRow = Awaited<ReturnType<PrismaClient['rule']['findMany']>>[number];

function toDomainRule(row: RuleRow): Rule {
  return {
    id: row.id,
    scope: row.scope,
    scopeRef: row.scopeRef ?? undefined,
    kind: row.kind,
    conditions: (row.conditions ?? {}) as Rule['conditions'],
    category: isCategory(row.action) ? row.action : undefined,
    instruction: row.instruction ?? undefined,
    priority: row.priority,
    enabled: row.enabled,
  };
}

export function createStoreActivities(prisma: PrismaClient): StoreActivities {
  return {
    async classifyByRules({ accountId, email }) {
      // Which domain and sender rules apply is decided by the domain module (subdomains, `@domain`,
      // case); here only other accounts' rules are left out.
      const rows = await prisma.rule.findMany({
        where: { enabled: true, OR: [{ scope: { not: 'account' } }, { scope: 'account', scopeRef: accountId }] },
      });
      const rules = [...BUILTIN_RULES, ...rows.map(toDomainRule)];
      try {
        const instructions = applicableInstructions(rules, email, accountId);
        const verdict = evaluateRules(rules, email, accountId);
        return verdict.decided
          ? { decided: true, category: verdict.category, ruleId: verdict.ruleId, reason: verdict.reason, instructions }
          : { decided: false, instructions };
      } catch (err) {
        // A broken rule is configuration, not a transient fault: don't retry, say which rule.
        if (err instanceof InvalidRuleError) throw ApplicationFailure.nonRetryable(err.message, 'InvalidRuleError');
        throw err;
      }
    },

    async loadThread({ accountId, threadId }) {
      const row = await prisma.thread.findUnique({
        where: { accountId_gmailThreadId: { accountId, gmailThreadId: threadId } },
      });
      if (!row) return null;
      const memory: ThreadMemory = {
        state: row.state as ThreadState,
        category: row.category && isCategory(row.category) ? row.category : undefined,
        confidence: row.confidence ?? undefined,
        draftId: row.draftId ?? undefined,
        draftMessageId: row.draftMessageId ?? undefined,
        draftCreatedAt: row.draftCreatedAt?.getTime(),
        reworkCount: row.reworkCount,
        handledMessageIds: row.handledMessageIds,
      };
      return memory;
    },

    async saveThread({ accountId, threadId, workflowRunId, memory, closed, decisions }) {
      const fields = {
        state: memory.state,
        category: memory.category ?? null,
        confidence: memory.confidence ?? null,
        draftId: memory.draftId ?? null,
        draftMessageId: memory.draftMessageId ?? null,
        draftCreatedAt: memory.draftCreatedAt === undefined ? null : new Date(memory.draftCreatedAt),
        reworkCount: memory.reworkCount,
        handledMessageIds: memory.handledMessageIds,
        lastMessageId: memory.handledMessageIds.at(-1) ?? null,
        lastRunId: workflowRunId,
        closedAt: closed ? new Date() : null,
      };
      await prisma.$transaction(async (tx) => {
        const thread = await tx.thread.upsert({
          where: { accountId_gmailThreadId: { accountId, gmailThreadId: threadId } },
          create: { accountId, gmailThreadId: threadId, ...fields },
          update: fields,
        });
        if (decisions.length === 0) return;
        await tx.decision.createMany({
          data: decisions.map(({ seq, decision }) => ({
            accountId,
            threadId: thread.id,
            runId: workflowRunId,
            seq,
            kind: decision.kind,
            source: decision.source,
            model: decision.model ?? null,
            tokensIn: decision.tokensIn ?? null,
            tokensOut: decision.tokensOut ?? null,
            detail: { text: decision.detail, ...(decision.ruleId ? { ruleId: decision.ruleId } : {}), at: decision.at },
          })),
          skipDuplicates: true, // a retried activity: the unique (run_id, seq) keeps one row each
        });
      });
    },
  };
}
