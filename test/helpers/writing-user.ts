// The user of a writing-lessons test, in the Gmail emulator of an inbox harness: a question gets our
// draft from its thread workflow; the user edits it and sends it, or types rework instructions into
// it; the mailbox events reach the thread workflow as the sync hands them over.
import { randomUUID } from 'node:crypto';
import { startDiscordEmulator, type RunningDiscordEmulator } from '../../emulators/discord/index.js';
import { runMemoryCli } from '../../src/cli/memory.js';
import { learningWorkflow } from '../../src/learning/learning-workflow.js';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from './inbox-harness.js';

export type WritingUser = ReturnType<typeof writingUser>;

export function writingUser(h: InboxHarness) {
  async function draftOf(threadId: string) {
    const draft = (await h.gmail.control.getState(h.email)).drafts.find((d) => d.threadId === threadId)!;
    const { gmail } = await h.accountGmail();
    return { ...draft, body: (await gmail.getDraft(draft.id))?.body ?? '' };
  }

  return {
    draftOf,

    /** A question from `from`, drafted by its workflow. */
    async drafted(from: string, subject: string): Promise<string> {
      const { threadId } = await deliverAndIngest(h, { from, subject, text: `Hi,\n\nCould you send me the ${subject} numbers?\n\nThanks` });
      await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0);
      return threadId;
    },

    /** The user edits our draft with `edit` (or not) and sends it; the workflow records the evidence in the step that logs the send. */
    async send(threadId: string, edit?: (body: string) => string): Promise<void> {
      let draft = await draftOf(threadId);
      if (edit) {
        await h.gmail.control.editDraft(h.email, draft.id, { text: edit(draft.body) });
        draft = await draftOf(threadId);
      }
      const sent = await h.gmail.control.sendDraft(h.email, draft.id);
      await h.ingest(threadId, { type: 'draft_gone', messageId: draft.messageId });
      await h.ingest(threadId, { type: 'message_added', messageId: sent.id, labelIds: sent.labelIds });
      await h.waitFor(threadId, (s) => s.decisions.some((d) => d.kind === 'sent'));
    },

    /** The user types `instructions` at the top of our draft and adds the Rework label; the draft is written again. */
    async rework(threadId: string, instructions: string): Promise<void> {
      const draft = await draftOf(threadId);
      const messageId = (await h.gmail.control.getState(h.email)).messages.find((m) => m.threadId === threadId && !m.labelIds.includes('DRAFT'))!.id;
      await h.gmail.control.editDraft(h.email, draft.id, { text: `${instructions}\n\n${draft.body}` });
      await h.gmail.control.modifyLabels(h.email, { threadId, add: ['Rework'] });
      await h.ingest(threadId, { type: 'labels_changed', messageId, changeId: `rw-${randomUUID().slice(0, 8)}`, added: ['rework'], removed: [] });
      await h.waitFor(threadId, (s) => s.reworkCount === 1 && s.state === 'drafted' && s.pendingEvents === 0);
    },

    /** `npm run cli -- memory …` as the user types it: its exit code and what it printed. */
    async memory(...argv: string[]): Promise<{ code: number; out: string }> {
      const lines: string[] = [];
      const code = await runMemoryCli(h.cfg, argv, { out: (l) => lines.push(l) });
      return { code, out: lines.join('\n') };
    },

    /** One run of the learning Schedule's workflow on the harness's queues, for the harness's account only (the shared test database holds other files' accounts, whose emulators are gone). */
    async learn(opts: { announce?: boolean } = {}) {
      const handle = await h.client.workflow.start(learningWorkflow, {
        taskQueue: h.cfg.TEMPORAL_TASK_QUEUE,
        workflowId: `learning-${randomUUID().slice(0, 8)}`,
        args: [{ llmTaskQueue: h.cfg.LLM_TASK_QUEUE, accountIds: [h.accountId], ...(opts.announce === false ? {} : { gmailTaskQueue: h.cfg.GMAIL_TASK_QUEUE }) }],
      });
      return { handle, result: await handle.result() };
    },
  };
}

export interface WritingWorld {
  h: InboxHarness;
  user: WritingUser;
  /** With `announce`: the Discord emulator and the webhook lessons are announced on. */
  discord?: { emulator: RunningDiscordEmulator; webhookId: string };
  /** Deletes the account's lessons and evidence, then closes the harness and the emulator. */
  close(): Promise<void>;
}

/** An inbox harness with its workers and its writing user; with `announce`, lessons are announced on a Discord emulator. */
export async function startWritingWorld(opts: { announce?: boolean } = {}): Promise<WritingWorld> {
  const emulator = opts.announce ? await startDiscordEmulator() : undefined;
  const webhook = emulator ? await emulator.control.createWebhook({ name: 'Durable Inbox' }) : undefined;
  const h = await startInboxHarness(webhook ? { env: { DISCORD_WEBHOOK_URL: webhook.url, PUBLIC_BASE_URL: 'http://127.0.0.1:3999' } } : {});
  await h.startWorkers();
  return {
    h,
    user: writingUser(h),
    ...(emulator && webhook ? { discord: { emulator, webhookId: webhook.id } } : {}),
    async close() {
      await h.prisma.lesson.deleteMany({ where: { accountId: h.accountId } });
      await h.prisma.writingEvidence.deleteMany({ where: { accountId: h.accountId } });
      await h.close();
      await emulator?.close();
    },
  };
}
