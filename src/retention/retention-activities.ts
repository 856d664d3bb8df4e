import type { PrismaClient } from '../db/client.js';
import type { RetentionActivities } from './contracts.js';

export function createRetentionActivities({ prisma }: { prisma: PrismaClient }): RetentionActivities {
  return {
    /** Deletes decision-log entries written before the cutoff. Idempotent. */
    async pruneDecisionLog({ before }: { before: string }): Promise<number> {
      const { count } = await prisma.decision.deleteMany({ where: { createdAt: { lt: new Date(before) } } });
      return count;
    },

    /** Deletes thread rows closed before the cutoff; open threads are never touched. Idempotent. */
    async pruneClosedThreads({ closedBefore }: { closedBefore: string }): Promise<number> {
      const { count } = await prisma.thread.deleteMany({ where: { closedAt: { lt: new Date(closedBefore) } } });
      return count;
    },

    /** Deletes writing evidence (docs/learning.md) recorded before the cutoff; lessons keep its id as provenance. Idempotent. */
    async purgeWritingEvidence({ before }: { before: string }): Promise<number> {
      const { count } = await prisma.writingEvidence.deleteMany({ where: { createdAt: { lt: new Date(before) } } });
      return count;
    },

    /** Deletes the corrections of triage (senders, subjects) recorded before the cutoff; lessons keep their copy as provenance. Idempotent. */
    async purgeCorrections({ before }: { before: string }): Promise<number> {
      const { count } = await prisma.learningCorrection.deleteMany({ where: { createdAt: { lt: new Date(before) } } });
      return count;
    },

    /** Deletes the request rows of Message Batches created before the cutoff (the batch rows stay). Idempotent. */
    async pruneBatchRequests({ createdBefore }: { createdBefore: string }): Promise<number> {
      const { count } = await prisma.llmBatchRequest.deleteMany({ where: { batch: { createdAt: { lt: new Date(createdBefore) } } } });
      return count;
    },
  };
}
