// Gmail activities of the actions (task queue durable-inbox-gmail): each carries out one journaled
// action and writes its outcome to the journal. Idempotent: the journal row says what is done, and a
// send looks for its marker in the thread before it sends, so a retry, a duplicate signal or a
// worker killed at any point never acts twice.
import { heartbeatWhile } from '../shared/activity-heartbeat.js';
import { activityInfo, ApplicationFailure } from '@temporalio/activity';
import type { MailboxAccess } from '../accounts/mailbox-accounts.js';
import { toActivityFailure } from '../accounts/mailbox-failures.js';
import { messageRecipients } from '../gmail/addresses.js';
import { isNotInMailbox, SendOutcomeUnknownError } from '../mail/mailbox-errors.js';
import type { Mailbox } from '../mail/mailbox.js';
import { LabelDirectory } from '../gmail/label-directory.js';
import { isGmailSystemLabel } from '../gmail/system-labels.js';
import { buildPlainTextMessage, buildReply, formatRfc2822Date, replyRecipients, toRaw, withTopHeader } from '../gmail/mime.js';
import { decodeBase64Url, encodeBase64Url } from '../gmail/mime-encoding.js';
import type { ThreadMessage } from '../mail/message.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import type { ActionGmailActivities } from './activity-contracts.js';
import { ACTION_MARKER_HEADER, reversalOf, SENDING_KINDS, type ActionResult, type JournaledAction } from './contracts.js';
import { loadAction, loadSafetyPolicy, proposeActions, transitionAction } from './journal.js';


/**
 * The last line of defence behind the policy: a label action never names, or resolves to, one of
 * Gmail's system labels (TRASH would trash, SPAM report, INBOX archive, past those kinds' checks).
 */
function refuseSystemLabel(action: JournaledAction, nameOrId: string): void {
  if (!isGmailSystemLabel(nameOrId)) return;
  throw ApplicationFailure.create({
    type: 'SystemLabelRefusedError',
    message: `${action.kind} ${action.argument}: ${nameOrId} is a Gmail system label; trash and archive are actions of their own`,
    nonRetryable: true,
  });
}

const notFound = (what: string) => ApplicationFailure.create({ type: 'ActionNotFoundError', message: `no action ${what}`, nonRetryable: true });

/** The thread's message the action is about, and the user's address (for a reply's recipients). */
async function messageOf(gmail: Mailbox, action: JournaledAction): Promise<{ thread: ThreadMessage[]; message: ThreadMessage }> {
  const snapshot = await gmail.getThread(action.threadId);
  const message = snapshot.messages.find((m) => m.id === action.messageId) ?? snapshot.messages.filter((m) => !m.isDraft).at(-1);
  if (!message) throw ApplicationFailure.create({ type: 'ActionTargetGoneError', message: `thread ${action.threadId} has no messages`, nonRetryable: true });
  return { thread: snapshot.messages, message };
}

/** The canonical addresses a reply to the message goes to: what the policy judges for an auto-reply. */
function replyAddresses(message: ThreadMessage, userEmail: string): string[] {
  return replyRecipients(message, userEmail).map((r) => r.address);
}

/**
 * Why the journaled recipients of a send are not the ones it may go to (null when they are): an
 * auto-reply goes to exactly the recipients the policy judged, which must still be whom a reply
 * to the message goes to; a forward to its one address.
 */
function recipientsMismatch(action: JournaledAction, message: ThreadMessage, userEmail: string): string | null {
  const judged = [...action.recipients].sort();
  const now = (action.kind === 'forward' ? [action.argument?.trim().toLowerCase() ?? ''] : replyAddresses(message, userEmail)).sort();
  if (judged.length === 0) return 'no recipients were judged for it';
  if (judged.length !== now.length || judged.some((r, i) => r !== now[i])) {
    return `it would go to ${now.join(', ') || 'nobody'}, but the policy judged ${judged.join(', ')}`;
  }
  return null;
}

/** The message an auto-reply or a forward sends, carrying the action's marker: to the journaled recipients only. */
function outgoingMessage(action: JournaledAction, message: ThreadMessage, userEmail: string): string {
  const marker = { [ACTION_MARKER_HEADER]: action.id };
  const subject = message.exactSubject ?? message.subject; // the thread's very subject: Gmail threads on it
  const parent = { messageId: message.messageId, references: message.references, inReplyTo: message.inReplyTo, subject };
  const to = action.recipients.map((address) => ({ address }));
  if (action.kind === 'auto_reply') {
    return buildReply({ parent, from: { address: userEmail }, to, body: action.result?.body ?? '', extraHeaders: marker }).raw;
  }
  // A forward keeps the thread's headers, so it stays in the thread (where the look-before-send finds it).
  const quoted = [
    '---------- Forwarded message ---------',
    `From: ${message.from ? message.from.address : ''}`,
    `Date: ${message.date}`,
    `Subject: ${message.subject}`,
    '',
    message.body,
  ].join('\n');
  return toRaw(
    buildPlainTextMessage({
      from: { address: userEmail },
      to,
      subject: `Fwd: ${subject.replace(/^(fwd?:\s*)+/i, '')}`,
      body: quoted,
      inReplyTo: message.messageId || undefined,
      references: [...message.references, ...(message.messageId ? [message.messageId] : [])].slice(-20),
      extraHeaders: marker,
    }),
  );
}

/**
 * A send later: the thread's draft as it is now, whole (its text, HTML, attachments, recipients and
 * subject: the user may have edited it since the send was scheduled), dated now (as Gmail dates a
 * sent draft), with the action's marker so a lost attempt is found.
 */
function draftAsSent(action: JournaledAction, rawDraft: string, now: Date): string {
  const marked = withTopHeader(decodeBase64Url(rawDraft), ACTION_MARKER_HEADER, action.id);
  return encodeBase64Url(withTopHeader(marked, 'Date', formatRfc2822Date(now)));
}

/** Answers to "is the pause label set?", reused for a while: the kill switch acts within that long. */
class PauseLabelCache {
  private readonly byAccount = new Map<string, { at: number; paused: Promise<boolean> }>();

  constructor(private readonly ttlMs: number) {}

  get(accountId: string, check: () => Promise<boolean>): Promise<boolean> {
    const cached = this.byAccount.get(accountId);
    if (cached && Date.now() - cached.at < this.ttlMs) return cached.paused;
    const paused = check();
    this.byAccount.set(accountId, { at: Date.now(), paused });
    paused.catch(() => this.byAccount.delete(accountId));
    return paused;
  }
}

export function createActionGmailActivities(deps: { accounts: MailboxAccess; db: SqlExecutor; pauseCheckTtlMs?: number }): ActionGmailActivities {
  const { accounts, db } = deps;
  const pauses = new PauseLabelCache(deps.pauseCheckTtlMs ?? 30_000);
  const labels = new LabelDirectory();

  const withGmail = async <T>(accountId: string, fn: (gmail: Mailbox, email: string) => Promise<T>): Promise<T> => {
    try {
      return await heartbeatWhile(() => accounts.call(accountId, fn));
    } catch (err) {
      throw toActivityFailure(err);
    }
  };

  /** Runs `use` with the label's id (the label created when missing, looked up again if deleted since). */
  function withLabel<T>(accountId: string, gmail: Mailbox, name: string, use: (id: string) => Promise<T>): Promise<T> {
    return labels.withIds(accountId, gmail, [name], (ids) => use(ids.get(name)!));
  }

  async function isPaused(gmail: Mailbox, accountId: string, label: string): Promise<boolean> {
    // The label is created when missing, so the user can set it from a phone.
    return pauses.get(accountId, () =>
      withLabel(accountId, gmail, label, async (id) => (await gmail.searchMessages({ labelId: id, in: 'ALL', maxResults: 1 })).messages.length > 0),
    );
  }

  /** The label change an action makes, with what its undo needs. */
  async function change(gmail: Mailbox, action: JournaledAction): Promise<ActionResult> {
    const thread = action.threadId;
    switch (action.kind) {
      case 'archive':
        await gmail.modifyThread(thread, { remove: ['INBOX'] });
        return {};
      case 'add_label':
      case 'remove_label':
        refuseSystemLabel(action, action.argument!);
        return withLabel(action.accountId, gmail, action.argument!, async (id) => {
          refuseSystemLabel(action, id);
          await gmail.modifyThread(thread, action.kind === 'add_label' ? { add: [id] } : { remove: [id] });
          return { labelId: id };
        });
      case 'mark_read':
        await gmail.modifyThread(thread, { remove: ['UNREAD'] });
        return { messageIds: [action.messageId] };
      case 'star':
        await gmail.modifyMessage(action.messageId, { add: ['STARRED'] });
        return { messageIds: [action.messageId] };
      case 'trash':
        await gmail.trashThread(thread);
        return {};
      default:
        throw ApplicationFailure.create({ type: 'ActionKindError', message: `${action.kind} is not a label change`, nonRetryable: true });
    }
  }

  /**
   * Carries out a queued or approved label change and journals it done; a change Gmail refuses for
   * good is journaled failed (with the reason) and thrown. Done already: its result, nothing redone.
   */
  async function perform(action: JournaledAction): Promise<JournaledAction> {
    if (action.state === 'done') return action;
    if (action.state !== 'queued' && action.state !== 'approved') {
      throw ApplicationFailure.create({ type: 'ActionStateError', message: `action ${action.id} is ${action.state}`, nonRetryable: true });
    }
    let result: ActionResult;
    try {
      result = await withGmail(action.accountId, (gmail) => change(gmail, action));
    } catch (err) {
      const failure = err instanceof ApplicationFailure ? err : undefined;
      if (failure?.nonRetryable) {
        await transitionAction(db, { id: action.id, from: ['queued', 'approved'], to: 'failed', note: `${failure.type}: ${failure.message}` });
      }
      throw err;
    }
    const done = await transitionAction(db, { id: action.id, from: ['queued', 'approved'], to: 'done', result });
    return done?.action ?? { ...action, state: 'done', result };
  }

  /**
   * A send later at its time: the draft as it is now goes out, then the draft is deleted. A draft
   * deleted before the time cancels the send. Looks first for a message with the action's marker,
   * so a worker killed between sending and journaling never sends twice.
   */
  async function sendDraftNow(action: JournaledAction): Promise<{ sent: boolean; state: JournaledAction['state']; sentMessageId?: string }> {
    const draftId = action.result?.draftId;
    const outcome = await withGmail(action.accountId, async (gmail) => {
      const thread = await gmail.getThread(action.threadId).catch((err: unknown) => {
        if (isNotInMailbox(err)) return null;
        throw err;
      });
      const earlier = thread?.messages.find((m) => m.isFromUser && !m.isDraft && m.headers[ACTION_MARKER_HEADER.toLowerCase()] === action.id);
      if (earlier) {
        if (draftId) await gmail.deleteDraft(draftId);
        return { sentId: earlier.id };
      }
      const draft = draftId ? await gmail.getDraft(draftId) : null;
      if (!draft) return { gone: 'the draft was deleted before the time' };
      const recipients = messageRecipients(draft.message);
      if (recipients.length === 0) return { gone: 'the draft has no recipient' };
      // A send goes to exactly the addresses judged when it was scheduled, or not at all.
      const unjudged = recipients.filter((r) => !action.recipients.includes(r));
      if (unjudged.length > 0) return { gone: `the draft now also goes to ${unjudged.join(', ')}, who were not on it when the send was scheduled: schedule it again` };
      const whole = await gmail.getDraftRaw(draft.draftId);
      if (!whole) return { gone: 'the draft was deleted before the time' };
      const sent = await gmail.sendMessage(draftAsSent(action, whole.raw, new Date()), action.threadId);
      await gmail.deleteDraft(draft.draftId);
      return { sentId: sent.id };
    });
    if ('gone' in outcome) {
      const undone = await transitionAction(db, { id: action.id, from: ['scheduled'], to: 'undone', note: `not sent: ${outcome.gone}` });
      return { sent: false, state: undone?.action.state ?? 'undone' };
    }
    const done = await transitionAction(db, { id: action.id, from: ['scheduled'], to: 'done', result: { sentMessageId: outcome.sentId } });
    return { sent: true, state: done?.action.state ?? 'done', sentMessageId: outcome.sentId };
  }

  /**
   * A send cut off after the server had the message (SendOutcomeUnknownError): not tried again, which
   * could send it twice; the action fails with the reason and the thread asks the user.
   */
  async function failUnknownOutcome(
    action: JournaledAction,
    send: () => Promise<{ sent: boolean; state: JournaledAction['state']; sentMessageId?: string }>,
  ): Promise<{ sent: boolean; state: JournaledAction['state']; sentMessageId?: string; why?: string }> {
    try {
      return await send();
    } catch (err) {
      if (!(err instanceof ApplicationFailure && err.type === SendOutcomeUnknownError.name)) throw err;
      const failed = await transitionAction(db, { id: action.id, from: ['scheduled'], to: 'failed', note: err.message });
      return { sent: false, state: failed?.action.state ?? 'failed', why: err.message };
    }
  }

  return {
    async proposeAndPerform({ pauseLabel, recipients, ...proposal }) {
      const { pausedByLabel, replyTo } = await withGmail(proposal.accountId, async (gmail, userEmail) => ({
        pausedByLabel: await isPaused(gmail, proposal.accountId, pauseLabel),
        // A workflow from before recipients were judged: read them as readThread would have.
        replyTo:
          recipients ??
          (proposal.actions.some((a) => a.kind === 'auto_reply')
            ? replyAddresses(await gmail.getMessage(proposal.messageId), userEmail)
            : []),
      }));
      const journaled = await proposeActions(db, { ...proposal, recipients: replyTo, pausedByLabel });
      const after: JournaledAction[] = [];
      for (const action of journaled) {
        if (action.state !== 'queued' || SENDING_KINDS.includes(action.kind)) {
          after.push(action);
          continue;
        }
        try {
          after.push(await perform(action));
        } catch (err) {
          if (!(err instanceof ApplicationFailure && err.nonRetryable)) throw err;
          // Journaled failed with the reason; the other actions still run.
          after.push((await loadAction(db, action.id)) ?? { ...action, state: 'failed' });
        }
      }
      return after;
    },

    async performAction({ actionId }) {
      const action = await loadAction(db, actionId);
      if (!action) throw notFound(actionId);
      return (await perform(action)).result ?? {};
    },

    async proposeSendLater({ accountId, threadId, requestId, workflowId, atMs, pauseLabel, approvalExpiryMs, decidedBy }) {
      const found = await withGmail(accountId, async (gmail) => {
        const refs = await gmail.listDraftsForThread(threadId);
        // The thread's newest draft: ours or the user's own.
        const drafts = (await Promise.all(refs.map((r) => gmail.getDraft(r.draftId)))).filter((d) => d !== null);
        const draft = drafts.sort((a, b) => b.message.internalDate - a.message.internalDate)[0];
        if (!draft) return null;
        return { draft, pausedByLabel: await isPaused(gmail, accountId, pauseLabel) };
      });
      if (!found) return { action: null, why: 'the thread has no draft to send' };
      const { draft, pausedByLabel } = found;
      const recipients = messageRecipients(draft.message);
      const [journaled] = await proposeActions(db, {
        accountId,
        threadId,
        messageId: requestId,
        sender: '',
        recipients,
        subject: draft.message.subject,
        workflowId,
        actions: [{ kind: 'send_later', reason: { source: 'user' }, result: { draftId: draft.draftId } }],
        pausedByLabel,
        approvalExpiryMs,
      });
      if (!journaled || journaled.state !== 'queued') return { action: journaled ?? null, why: journaled?.because.join('; ') ?? 'not journaled' };
      const scheduled = await transitionAction(db, { id: journaled.id, from: ['queued'], to: 'scheduled', scheduledFor: new Date(atMs), result: { draftId: draft.draftId }, ...(decidedBy ? { decidedBy } : {}) });
      return { action: scheduled?.action ?? journaled };
    },

    async sendAction({ actionId, pauseLabel }) {
      const action = await loadAction(db, actionId);
      if (!action) throw notFound(actionId);
      if (action.state !== 'scheduled') return { sent: action.state === 'done', state: action.state };
      if (action.kind === 'send_later') return failUnknownOutcome(action, () => sendDraftNow(action));
      return failUnknownOutcome(action, () => withGmail(action.accountId, async (gmail, userEmail) => {
        const { thread, message } = await messageOf(gmail, action);
        // Look before sending: an earlier attempt may have sent it and died before the journal write.
        const earlier = thread.find((m) => m.isFromUser && !m.isDraft && m.headers[ACTION_MARKER_HEADER.toLowerCase()] === action.id);
        if (!earlier) {
          // The kill switch stops an automatic send that nobody approved, even during its delay.
          const approved = action.decidedBy !== undefined || action.reason.source === 'user';
          if (!approved) {
            const policy = await loadSafetyPolicy(db, action.accountId);
            if (policy.paused || (await isPaused(gmail, action.accountId, pauseLabel))) {
              const back = await transitionAction(db, {
                id: actionId,
                from: ['scheduled'],
                to: 'awaiting_approval',
                note: 'automatic actions were paused before it went out: it waits for your approval',
              });
              return { sent: false, state: back?.action.state ?? 'awaiting_approval' };
            }
          }
        }
        if (!earlier) {
          // It goes to exactly whom the policy judged, or nowhere.
          const mismatch = recipientsMismatch(action, message, userEmail);
          if (mismatch) {
            const failed = await transitionAction(db, { id: actionId, from: ['scheduled'], to: 'failed', note: `not sent: ${mismatch}` });
            return { sent: false, state: failed?.action.state ?? 'failed' };
          }
        }
        const sent = earlier ?? (await gmail.sendMessage(outgoingMessage(action, message, userEmail), action.threadId));
        if (action.result?.draftId) await gmail.deleteDraft(action.result.draftId); // the approval draft, if any
        const done = await transitionAction(db, { id: actionId, from: ['scheduled'], to: 'done', result: { sentMessageId: sent.id } });
        return { sent: true, state: done?.action.state ?? 'done', sentMessageId: sent.id };
      }));
    },

    async undoAction({ actionId, by }) {
      const action = await loadAction(db, actionId);
      if (!action) throw notFound(actionId);
      if (action.state === 'undone') return { undone: true };
      const reversal = reversalOf(action, action.state);
      if (reversal.kind === 'none') return { undone: false, why: reversal.why };
      if (reversal.kind === 'cancel_send') return { undone: false, why: 'a scheduled send is cancelled by its thread workflow' };
      if (reversal.kind === 'cancel_timer') return { undone: false, why: 'a timer is cancelled by its thread workflow' };
      await withGmail(action.accountId, async (gmail) => {
        try {
          switch (reversal.kind) {
            case 'untrash':
              // A bulk trash recorded its messages: exactly those come back, each where it was (the journal says which were not in the inbox).
              if (action.result?.messageIds?.length) {
                const away = new Set(action.result.notInInbox ?? []);
                const fromInbox = action.result.messageIds.filter((id) => !away.has(id));
                if (fromInbox.length > 0) await gmail.batchModify(fromInbox, { remove: ['TRASH'] });
                if (away.size > 0) await gmail.batchModify([...away], { remove: ['TRASH', 'INBOX'] });
                return;
              }
              return await gmail.untrashThread(action.threadId);
            case 'delete_draft':
              if (action.result?.draftId) await gmail.deleteDraft(action.result.draftId);
              return;
            case 'labels': {
              // System labels (INBOX, UNREAD, ...) are their own ids; a user label is the id the action
              // recorded, else looked up by name.
              const takeBack = async (argumentId?: string) => {
                const ids = (names: string[]) => names.map((n) => (n === action.argument && argumentId ? argumentId : n));
                const labelChange = { add: ids(reversal.add), remove: ids(reversal.remove) };
                const messages = action.result?.messageIds;
                if (messages && messages.length > 0) {
                  await gmail.batchModify(messages, labelChange); // a bulk batch: up to 1000 ids, one call per 1000
                } else {
                  await gmail.modifyThread(action.threadId, labelChange);
                }
              };
              if (!action.argument || action.result?.labelId) return await takeBack(action.result?.labelId);
              return await withLabel(action.accountId, gmail, action.argument, takeBack);
            }
          }
        } catch (err) {
          if (!(isNotInMailbox(err))) throw err;
          // Deleted since: nothing is left to take back.
        }
      });
      await transitionAction(db, { id: actionId, from: ['done'], to: 'undone', decidedBy: by, note: `undone by ${by}` });
      return { undone: true };
    },

    async placeApprovalDraft({ actionId, label }) {
      const action = await loadAction(db, actionId);
      if (!action) throw notFound(actionId);
      if (action.result?.draftId) {
        const draftId = action.result.draftId;
        const existing = await withGmail(action.accountId, (gmail) => gmail.getDraft(draftId));
        if (existing) return { draftId: existing.draftId, messageId: existing.messageId };
      }
      const placed = await withGmail(action.accountId, async (gmail, userEmail) => {
        // Look before creating: an attempt that died after creating it left it in the thread.
        let draft: { draftId: string; messageId: string } | null = null;
        if (activityInfo().attempt > 1) {
          for (const ref of await gmail.listDraftsForThread(action.threadId)) {
            const candidate = await gmail.getDraft(ref.draftId);
            if (candidate?.message.headers[ACTION_MARKER_HEADER.toLowerCase()] === action.id) draft = candidate;
          }
        }
        if (!draft) {
          const { message } = await messageOf(gmail, action);
          draft = await gmail.createDraft({ threadId: action.threadId, raw: outgoingMessage(action, message, userEmail) });
        }
        await withLabel(action.accountId, gmail, label, (id) => gmail.modifyThread(action.threadId, { add: [id] }));
        return { draftId: draft.draftId, messageId: draft.messageId };
      });
      await transitionAction(db, { id: actionId, from: ['awaiting_approval'], to: 'awaiting_approval', result: { draftId: placed.draftId } });
      return placed;
    },

    async discardApprovalDraft({ accountId, threadId, draftId, label }) {
      await withGmail(accountId, async (gmail) => {
        if (draftId) await gmail.deleteDraft(draftId);
        try {
          await withLabel(accountId, gmail, label, (id) => gmail.modifyThread(threadId, { remove: [id] }));
        } catch (err) {
          if (!(isNotInMailbox(err))) throw err;
        }
      });
    },
  };
}
