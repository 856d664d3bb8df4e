// The world of a triage-corrections test: the harness account's newsletters labelled and archived by
// the category's actions, a domain's mail a newsletter by rule, and the sync's activities reading
// the mailbox's history (label changes included) and handing it to the threads, page by page.
import { setCategoryActions } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { createSyncActivities } from '../../src/sync/sync-activities.js';
import type { InboxHarness } from './inbox-harness.js';

export interface NewsletterCorrections {
  /** Where the last syncNow stopped (the account's cursor at set-up). */
  readonly cursor: string;
  /** Reads the history since `from` and hands the changes to the threads; where it stopped. */
  syncFrom(from: string): Promise<string>;
  /** The cursor the account has stored (what the sync activity starts from). */
  loadCursor(): Promise<string>;
  /** syncFrom the cursor, and moves the cursor on. */
  syncNow(): Promise<void>;
  /** Removes the rule, the category's actions and the account's lessons. */
  cleanUp(): Promise<void>;
}

export async function newsletterCorrections(h: InboxHarness, domain: string): Promise<NewsletterCorrections> {
  await setCategoryActions(prismaExecutor(h.prisma), h.accountId, 'newsletter', [{ kind: 'add_label', argument: 'Newsletters' }, { kind: 'archive' }]);
  await h.prisma.rule.create({ data: { scope: 'domain', scopeRef: domain, kind: 'deterministic', action: 'newsletter' } });
  const sync = createSyncActivities({
    prisma: h.prisma,
    accounts: h.mailboxAccounts(),
    client: h.client,
    threadSettings: h.settings,
    threadTaskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
    learnFromLabels: true,
  });
  let cursor = await sync.loadCursor({ accountId: h.accountId });
  async function syncFrom(from: string): Promise<string> {
    let at = from;
    for (;;) {
      const page = await sync.syncHistoryPage({ accountId: h.accountId, startHistoryId: at, pageSize: 100 });
      if (page.kind !== 'page') throw new Error(`sync: ${page.kind}`);
      at = page.cursor;
      if (!page.more) return at;
    }
  }
  return {
    get cursor() {
      return cursor;
    },
    syncFrom,
    loadCursor: () => sync.loadCursor({ accountId: h.accountId }),
    async syncNow() {
      cursor = await syncFrom(cursor);
    },
    async cleanUp() {
      await h.prisma.rule.deleteMany({ where: { scopeRef: domain } });
      await h.prisma.lesson.deleteMany({ where: { accountId: h.accountId } });
      await h.prisma.categoryActions.deleteMany({ where: { scopeRef: h.accountId } });
    },
  };
}
