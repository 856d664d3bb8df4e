// Mailbox activities of the thread workflow (task queue durable-inbox-gmail). Each wraps one side
// effect on the account's mailbox, Gmail's or IMAP's (readThread also reads the rules' verdict from
// Postgres); errors become Temporal failures that say whether a retry can help (429 → retry after
// Retry-After; revoked grant or refused password → non-retryable).
import { heartbeatWhile } from '../shared/activity-heartbeat.js';
import { activityInfo, ApplicationFailure } from '@temporalio/activity';
import { ACCOUNT_UNUSABLE_TYPES } from '../accounts/account-access.js';
import type { MailboxAccess } from '../accounts/mailbox-accounts.js';
import { buildReply, replyRecipients, type ReplyParent } from '../gmail/mime.js';
import { findSentReplyAfter, latestInboundMessage } from '../gmail/thread-queries.js';
import { isNotInMailbox } from '../mail/mailbox-errors.js';
import type { Mailbox } from '../mail/mailbox.js';
import { LabelDirectory } from '../gmail/label-directory.js';
import type { ThreadMessage } from '../mail/message.js';
import type { LabelNames, LabelRole } from './contracts.js';
import { BUILTIN_RULES, evaluateRules } from '../rules/rules.js';
import type { DraftRef, GmailActivities, PromptMessage, ReplyContext, ReplyHeaders } from './activity-contracts.js';
import { toActivityFailure } from '../accounts/mailbox-failures.js';
import { draftsWritten } from '../metrics/metrics.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { coldOutreachThreads, mayNeedReply, rulesVerdict, withColdEmailGate, withUnsubscribeWatch } from './rules-verdict.js';
import { COLD_EMAIL_HEADERS } from '../rules/cold-email.js';
import { storeReadMessages } from '../db/message-rows.js';

/** Bodies are cut to this many characters before they enter workflow history. */
const BODY_CAP = 6000;
/** The newest messages of a long thread that the classifier and the drafter see. */
const MESSAGES_CAP = 10;
const TONE_EXAMPLES = 3;
/** Header values are cut to this many characters before they enter workflow history. */
const HEADER_CAP = 2000;

function toPromptMessage(m: ThreadMessage, userEmail: string): PromptMessage {
  const address = (a: { name?: string; address: string }) => (a.name ? `${a.name} <${a.address}>` : a.address);
  const headers: Record<string, string> = {};
  // What the rules and the prompts look at (From, Return-Path and Content-Type tell a bounce), cut to a cap.
  const kept = ['from', 'return-path', 'content-type', 'list-unsubscribe', 'precedence', 'auto-submitted', 'reply-to', 'message-id', 'references', ...COLD_EMAIL_HEADERS];
  for (const name of new Set(kept)) {
    const value = m.headers[name];
    if (value !== undefined) headers[name] = value.slice(0, HEADER_CAP);
  }
  return {
    messageId: m.id,
    sender: m.from?.address ?? '', // canonical already (src/gmail/addresses.ts)
    from: m.from ? address(m.from) : '',
    to: m.to.map(address).join(', '),
    subject: m.subject,
    date: m.date,
    body: m.body.length > BODY_CAP ? `${m.body.slice(0, BODY_CAP)}\n[… truncated]` : m.body,
    headers,
    fromUser: m.isFromUser || m.from?.address.toLowerCase() === userEmail.toLowerCase(),
    ...(m.bodySource === 'none' && m.parseWarnings.length > 0 ? { unreadable: m.parseWarnings.join('; ') } : {}),
    ...(m.bodyDefect ? { bodyDefect: m.bodyDefect } : {}),
  };
}

function replyHeadersOf(m: ThreadMessage, userEmail: string): ReplyHeaders {
  return {
    rfcMessageId: m.messageId,
    references: m.references,
    inReplyTo: m.inReplyTo,
    subject: m.exactSubject ?? m.subject,
    // Bare addresses: a display name written by the sender never reaches our To header.
    recipients: replyRecipients(m, userEmail).map((r) => ({ address: r.address })),
  };
}

/** Signatures by account, read again after SIGNATURE_TTL_MS: users rarely change them. */
const SIGNATURE_TTL_MS = 10 * 60_000;

class SignatureCache {
  private readonly byAccount = new Map<string, { at: number; signature: Promise<string | undefined> }>();

  get(accountId: string, gmail: Mailbox): Promise<string | undefined> {
    const cached = this.byAccount.get(accountId);
    if (cached && Date.now() - cached.at < SIGNATURE_TTL_MS) return cached.signature;
    const signature = gmail.getSignature();
    this.byAccount.set(accountId, { at: Date.now(), signature });
    signature.catch(() => this.byAccount.delete(accountId));
    return signature;
  }
}

/** The user's recent replies to this sender (tone); none when the mail has no usable sender address. */
async function toneExamplesFor(mailbox: Mailbox, sender: string): Promise<string[]> {
  const sent = await mailbox.searchMessages({ in: 'SENT', to: sender, maxResults: TONE_EXAMPLES });
  const examples: string[] = [];
  for (const ref of sent.messages) {
    const message = await mailbox.getMessage(ref.id);
    if (message.body.trim()) examples.push(message.body.slice(0, 1500));
  }
  return examples;
}

/**
 * Whether the user has had a thread with `sender` before this one, either direction: mail the user
 * sent them, or mail from them in a thread the gate did not call cold outreach (a sequence's
 * follow-ups in new threads are no contact). The newest few of each are looked at.
 */
async function earlierThreadWith(mailbox: Mailbox, db: SqlExecutor, accountId: string, sender: string, threadId: string): Promise<boolean> {
  const others = (found: { messages: { threadId: string }[] }) => [...new Set(found.messages.map((m) => m.threadId))].filter((t) => t !== threadId);
  if (others(await mailbox.searchMessages({ in: 'SENT', to: sender, maxResults: 10 })).length > 0) return true;
  const received = others(await mailbox.searchMessages({ in: 'ALL', from: sender, maxResults: 10 }));
  if (received.length === 0) return false;
  const cold = await coldOutreachThreads(db, accountId, received);
  return received.some((t) => !cold.has(t));
}

/**
 * Creates the thread's draft, or replaces the one we made before. Looks before it creates on a
 * retry, so a retry or a restarted worker never leaves two drafts in the thread.
 */
async function writeDraft(
  gmail: Mailbox,
  userEmail: string,
  { threadId, draftId, body, replyTo }: { threadId: string; draftId?: string; body: string; replyTo: PromptMessage },
): Promise<DraftRef> {
  // The message we answer, as readThread saw it; histories from before replyHeaders existed
  // read its headers from the mailbox.
  const parent = replyTo.replyHeaders ?? replyHeadersOf(await gmail.getMessage(replyTo.messageId), userEmail);
  const replyParent: ReplyParent = {
    messageId: parent.rfcMessageId,
    references: parent.references,
    inReplyTo: parent.inReplyTo,
    subject: parent.subject,
  };
  const reply = buildReply({ parent: replyParent, from: { address: userEmail }, to: parent.recipients, body });
  const content = { threadId, raw: reply.raw };

  // Look before creating: our recorded draft, or (on a retry) a draft with exactly this body
  // left by an earlier attempt whose result was lost (the worker died after creating it).
  // A first attempt with no recorded draft has nothing to find.
  let target = draftId ? await gmail.getDraft(draftId) : null;
  if (!target && activityInfo().attempt > 1) {
    for (const ref of await gmail.listDraftsForThread(threadId)) {
      const candidate = await gmail.getDraft(ref.draftId);
      if (candidate && sameText(candidate.body, body)) {
        target = candidate;
        break;
      }
    }
  }
  if (target && sameText(target.body, body)) {
    return { draftId: target.draftId, messageId: target.messageId, internalDate: target.message.internalDate };
  }
  const writtenAfter = Date.now();
  const ref = target ? await gmail.updateDraft(target.draftId, content) : await gmail.createDraft(content);
  return { draftId: ref.draftId, messageId: ref.messageId, internalDate: writtenAfter };
}

function sameText(a: string, b: string): boolean {
  const norm = (s: string) => s.replace(/\r\n?/g, '\n').trim();
  return norm(a) === norm(b);
}

export function createGmailActivities({ accounts, db }: { accounts: MailboxAccess; db: SqlExecutor }): GmailActivities {
  const labels = new LabelDirectory();
  const signatures = new SignatureCache();

  /** What a reply to `sender` is written with: tone examples and the user's signature. */
  async function replyContextFor(gmail: Mailbox, accountId: string, sender: string): Promise<ReplyContext> {
    const [toneExamples, signature] = await Promise.all([toneExamplesFor(gmail, sender), signatures.get(accountId, gmail)]);
    return signature ? { toneExamples, signature } : { toneExamples };
  }

  const withGmail = async <T>(accountId: string, fn: (gmail: Mailbox, email: string) => Promise<T>): Promise<T> => {
    try {
      return await heartbeatWhile(() => accounts.call(accountId, fn));
    } catch (err) {
      throw toActivityFailure(err);
    }
  };

  const roleNames = (names: LabelNames, roles: LabelRole[]) => roles.map((role) => names[role]);

  async function applyLabels(
    gmail: Mailbox,
    accountId: string,
    threadId: string,
    names: LabelNames,
    add: LabelRole[],
    remove: LabelRole[],
    archive: boolean,
  ): Promise<void> {
    const ids = await labels.ids(accountId, gmail, [...roleNames(names, add), ...roleNames(names, remove)]);
    const idOf = (name: string) => ids.get(name)!;
    try {
      await gmail.modifyThread(threadId, {
        add: roleNames(names, add).map(idOf),
        remove: [...roleNames(names, remove).map(idOf), ...(archive ? ['INBOX'] : [])],
      });
    } catch (err) {
      if (!(isNotInMailbox(err))) throw err; // a deleted thread has no labels to change
    }
  }

  return {
    async readThread({ accountId, threadId, withRules, withoutReplyContext }) {
      return withGmail(accountId, async (gmail, userEmail) => {
        let snapshot;
        try {
          snapshot = await gmail.getThread(threadId);
        } catch (err) {
          if (isNotInMailbox(err)) return null; // the thread was deleted: finish quietly
          throw err;
        }
        const visible = snapshot.messages.filter((m) => !m.isDraft);
        // The senders view reads `messages`: the mail a thread reads is stored there as the backfill stores it.
        await storeReadMessages(db, accountId, visible);
        const latest = latestInboundMessage(snapshot, userEmail);
        const latestInbound = latest ? { ...toPromptMessage(latest, userEmail), replyHeaders: replyHeadersOf(latest, userEmail) } : null;
        const rules =
          withRules && latestInbound
            ? await withUnsubscribeWatch(
                db,
                accountId,
                latestInbound,
                latest!.internalDate,
                await withColdEmailGate(db, accountId, latestInbound, await rulesVerdict(db, accountId, latestInbound), () =>
                  earlierThreadWith(gmail, db, accountId, latestInbound.sender, threadId),
                ),
              )
            : undefined;
        // Mail that gets no reply (by the rules, else the built-in header rules), or has nobody to
        // reply to: no quota spent on tone, and the LLM only classifies it.
        const answerable =
          !withoutReplyContext &&
          latestInbound &&
          latestInbound.replyHeaders.recipients.length > 0 &&
          (rules ? mayNeedReply(rules) : !evaluateRules(BUILTIN_RULES, latestInbound).decided);
        return {
          threadId,
          subject: visible[0]?.subject ?? '',
          userEmail,
          messages: visible.slice(-MESSAGES_CAP).map((m) => toPromptMessage(m, userEmail)),
          latestInbound,
          ...(rules ? { rules } : {}),
          ...(answerable ? { replyContext: await replyContextFor(gmail, accountId, latestInbound.sender) } : {}),
        };
      });
    },

    async gatherReplyContext({ accountId, sender }) {
      return withGmail(accountId, (gmail) => replyContextFor(gmail, accountId, sender));
    },

    async placeDraft({ accountId, threadId, draftId, body, replyTo, labels: names, add, remove }) {
      return withGmail(accountId, async (gmail, userEmail) => {
        const placed = await writeDraft(gmail, userEmail, { threadId, draftId, body, replyTo });
        draftsWritten.inc({});
        await applyLabels(gmail, accountId, threadId, names, add, remove, false);
        return placed;
      });
    },

    async readDraft({ accountId, draftId }) {
      return withGmail(accountId, async (gmail) => {
        const draft = await gmail.getDraft(draftId);
        return draft
          ? { draftId: draft.draftId, messageId: draft.messageId, internalDate: draft.message.internalDate, body: draft.body }
          : null;
      });
    },

    async changeLabels({ accountId, threadId, labels: names, add, remove, archive }) {
      await withGmail(accountId, (gmail) => applyLabels(gmail, accountId, threadId, names, add, remove, archive ?? false));
    },

    async threadLabelRoles({ accountId, threadId, labels: names }) {
      return withGmail(accountId, async (gmail) => {
        let onThread: string[];
        try {
          onThread = await gmail.getThreadLabelIds(threadId);
        } catch (err) {
          if (isNotInMailbox(err)) return null;
          throw err;
        }
        const ids = await labels.ids(accountId, gmail, Object.values(names));
        return (Object.entries(names) as [LabelRole, string][])
          .filter(([, name]) => onThread.includes(ids.get(name) ?? ''))
          .map(([role]) => role);
      });
    },

    async gmailAnswers({ accountId }) {
      try {
        await withGmail(accountId, (gmail) => gmail.getProfile());
        return true;
      } catch (err) {
        // A lost grant is the account wrapper's to wait on; any other error means Gmail does not answer.
        if (err instanceof ApplicationFailure && err.nonRetryable && ACCOUNT_UNUSABLE_TYPES.includes(err.type ?? '')) throw err;
        return false;
      }
    },

    async findSentReply({ accountId, threadId, afterMs }) {
      return withGmail(accountId, async (gmail, userEmail) => {
        try {
          const sent = findSentReplyAfter(await gmail.getThread(threadId), afterMs, userEmail);
          return sent ? { messageId: sent.id, body: sent.body.slice(0, BODY_CAP) } : null;
        } catch (err) {
          if (isNotInMailbox(err)) return null;
          throw err;
        }
      });
    },
  };
}
