// The bulk actions' activities (Gmail task queue, the quota's bulk lane: live mail goes first):
// counting what a selection touches, and moving (or labelling) one batch of at most 1,000 messages, journaled with
// its ids before it moves so that a killed worker's batch is found and finished, and undo restores
// exactly those messages. Either provider, through MailboxAccess.
import { searchableLabelName } from '../gmail/label-search.js';
import { ApplicationFailure } from '@temporalio/activity';
import type { MailboxAccess } from '../accounts/mailbox-accounts.js';
import { toActivityFailure } from '../accounts/mailbox-failures.js';
import { actionKey, type ActionKind } from '../actions/contracts.js';
import { loadActionsByKey, proposeActions, transitionAction } from '../actions/journal.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { canonicalAddress } from '../gmail/addresses.js';
import { readMailQuery } from '../mail/mail-query.js';
import type { LabelChange } from '../mail/message.js';
import { searchableAddress, searchableDomain, type Mailbox, type MailSearch } from '../mail/mailbox.js';
import { heartbeatWhile } from '../shared/activity-heartbeat.js';
import type { CleanupBulkActivities } from './activity-contracts.js';
import { MAX_BULK_BATCH, type BulkOperation, type BulkSelection } from './contracts.js';

const refused = (message: string) => ApplicationFailure.create({ type: 'BulkSelectionError', message, nonRetryable: true });

/** The label a bulk label adds: a name of ours any provider's search can say, never a system label. */
export function bulkLabel(label: string | undefined): string {
  const name = label === undefined ? undefined : searchableLabelName(label);
  if (!name) throw refused(`${JSON.stringify(label ?? '')} cannot be a bulk label: a name of letters, digits, blanks and - _ . /, not a system label`);
  return name;
}

/**
 * The search of the messages a bulk action still has to change: a moved one no longer matches, and
 * a labelled one no longer lacks the label (so a resumed or repeated run touches only what is left).
 */
export function bulkSearch(selection: BulkSelection, operation: BulkOperation, label?: string): MailSearch {
  const where: MailSearch['in'] = operation === 'archive' ? 'INBOX' : 'ALL'; // ALL leaves out the trash
  const notDone: Partial<MailSearch> = operation === 'label' ? { withoutLabel: bulkLabel(label) } : {};
  if (selection.kind === 'query') {
    if (selection.value.trim() === '') throw refused('an empty query would take all the mail');
    return { query: selection.value, in: where, ...notDone };
  }
  if (selection.kind === 'sender') {
    const address = searchableAddress(canonicalAddress(selection.value));
    if (!address) throw refused(`${selection.value} is not an address`);
    return { from: address, in: where, ...notDone };
  }
  const domain = searchableDomain(selection.value);
  if (!domain) throw refused(`${selection.value} is not a domain`);
  return { fromDomain: domain, in: where, ...notDone };
}

/**
 * A query the provider reads into IMAP SEARCH must mean there what it says: an operator IMAP cannot
 * say would widen the search, a negation or an OR read as words would change it, and a bulk action
 * touches no more than it was asked to.
 */
function exactOn(mailbox: Mailbox, search: MailSearch): void {
  // A server in folders mode keeps none of our labels: there is no label to add, nor to tell which lack it.
  if (search.withoutLabel !== undefined && mailbox.capabilities.labels === 'folders') {
    throw refused(`this server keeps no keywords (folders mode): the label ${JSON.stringify(search.withoutLabel)} cannot be kept on its messages`);
  }
  if (search.query === undefined || mailbox.capabilities.query === 'server') return;
  const read = readMailQuery(search.query, new Date());
  const inexact = [...read.ignored, ...read.readAsWords];
  if (inexact.length === 0) return;
  throw ApplicationFailure.create({
    type: 'BulkSelectionError',
    message: `this IMAP server cannot search for ${inexact.map((t) => JSON.stringify(t)).join(', ')} as Gmail does; a bulk action does not run on a wider or different search (use from:, to:, subject:, words, dates, is:, in:, label:)`,
    nonRetryable: true,
  });
}

/** Up to `want` ids the search finds (pages of at most 500); `complete`: it found every match there is. */
async function listUpTo(mailbox: Mailbox, search: MailSearch, want: number): Promise<{ ids: string[]; complete: boolean }> {
  const found: string[] = [];
  let pageToken: string | undefined;
  let complete = false;
  do {
    const asked = Math.min(500, want - found.length);
    const page = await mailbox.searchMessages({ ...search, maxResults: asked, ...(pageToken ? { pageToken } : {}) });
    found.push(...page.messages.map((m) => m.id));
    pageToken = page.nextPageToken;
    // A page with no next one is the last (Gmail and IMAP both give a token while matches remain).
    complete = !pageToken;
  } while (pageToken && found.length < want);
  const ids = [...new Set(found)];
  return { ids: ids.slice(0, want), complete: complete && ids.length <= want };
}

/**
 * A trash batch remembers where each message came from, in the journal (the same on every provider,
 * and on IMAP servers that keep no keywords): the selection's inbox mail first; only when that listing
 * is complete is the rest of the batch taken from everywhere else, each of those known not to be in the
 * inbox (`notInInbox`), so undo puts it back out of the inbox (IMAP: Archive, Sent) and the others in.
 */
async function trashBatch(mailbox: Mailbox, search: MailSearch, want: number): Promise<{ messageIds: string[]; notInInbox?: string[] }> {
  const inbox = await listUpTo(mailbox, { ...search, in: 'INBOX' }, want);
  if (!inbox.complete || inbox.ids.length >= want) return { messageIds: inbox.ids };
  const inInbox = new Set(inbox.ids);
  const elsewhere = (await listUpTo(mailbox, search, want + inbox.ids.length)).ids.filter((id) => !inInbox.has(id)).slice(0, want - inbox.ids.length);
  return { messageIds: [...inbox.ids, ...elsewhere], ...(elsewhere.length > 0 ? { notInInbox: elsewhere } : {}) };
}

const KIND: Record<BulkOperation, ActionKind> = { archive: 'archive', trash: 'trash', label: 'add_label' };

/** The label change of a batch (a label: the id the batch journaled). */
function changeOf(operation: BulkOperation, labelId: string | undefined): LabelChange {
  if (operation === 'archive') return { remove: ['INBOX'] };
  if (operation === 'trash') return { add: ['TRASH'] };
  if (!labelId) throw ApplicationFailure.create({ type: 'BulkBatchStateError', message: 'a label batch journaled no label id', nonRetryable: true });
  return { add: [labelId] };
}

function describe(operation: BulkOperation, label: string | undefined, selection: BulkSelection): string {
  const what = operation === 'label' ? `label ${JSON.stringify(label)}` : operation;
  return `${what} of ${selection.kind === 'query' ? `the mail found by ${JSON.stringify(selection.value)}` : `the mail of ${selection.kind} ${selection.value}`}`;
}

export function createBulkActivities(deps: { accounts: MailboxAccess; db: SqlExecutor }): CleanupBulkActivities {
  const { accounts, db } = deps;
  const withMailbox = async <T>(accountId: string, fn: (mailbox: Mailbox) => Promise<T>): Promise<T> => {
    try {
      return await heartbeatWhile(() => accounts.call(accountId, fn));
    } catch (err) {
      throw toActivityFailure(err);
    }
  };

  return {
    async countBulk({ accountId, selection, operation, label }) {
      const search = bulkSearch(selection, operation, label);
      return withMailbox(accountId, async (mailbox) => {
        exactOn(mailbox, search);
        const ids = new Set<string>();
        const threads = new Set<string>();
        let pageToken: string | undefined;
        do {
          const page = await mailbox.searchMessages({ ...search, maxResults: 500, ...(pageToken ? { pageToken } : {}) });
          for (const m of page.messages) {
            ids.add(m.id);
            threads.add(m.threadId);
          }
          pageToken = page.nextPageToken;
        } while (pageToken);
        return { messages: ids.size, threads: threads.size };
      });
    },

    async runBulkBatch({ accountId, workflowId, batch, selection, operation, label, batchSize }) {
      const kind = KIND[operation];
      const argument = operation === 'label' ? bulkLabel(label) : undefined;
      const ids = { accountId, threadId: 'bulk', messageId: `${workflowId}#${batch}` };
      const key = actionKey(ids, { kind, ...(argument ? { argument } : {}) });
      let action = (await loadActionsByKey(db, [key])).get(key);
      if (action?.state === 'done' || action?.state === 'undone') return { moved: action.result?.messageIds?.length ?? 0, actionId: action.id };
      if (!action) {
        const search = bulkSearch(selection, operation, label);
        const want = Math.min(batchSize, MAX_BULK_BATCH);
        // A listing page holds at most 500 ids: a batch of 1000 reads two.
        const { messageIds, notInInbox, labelId } = await withMailbox(accountId, async (mailbox) => {
          exactOn(mailbox, search);
          // The label's id (Gmail's; IMAP's is its name), created when missing, journaled with the batch.
          const labelId = argument ? (await mailbox.ensureLabels([argument])).get(argument) : undefined;
          if (operation === 'trash') return { ...(await trashBatch(mailbox, search, want)), labelId };
          return { messageIds: (await listUpTo(mailbox, search, want)).ids, labelId };
        });
        if (messageIds.length === 0) return { moved: 0 };
        [action] = await proposeActions(db, {
          ...ids,
          sender: selection.kind === 'sender' ? canonicalAddress(selection.value) : '',
          recipients: [],
          subject: `${describe(operation, argument, selection)}: batch ${batch + 1}`,
          workflowId,
          actions: [{ kind, ...(argument ? { argument } : {}), reason: { source: 'user' }, result: { messageIds, ...(notInInbox ? { notInInbox } : {}), ...(labelId ? { labelId } : {}) } }],
          pausedByLabel: false,
          approvalExpiryMs: 0,
        });
      }
      if (action!.state !== 'queued') {
        throw ApplicationFailure.create({ type: 'BulkBatchStateError', message: `batch ${batch} is ${action!.state}: ${action!.note ?? ''}`, nonRetryable: true });
      }
      const messageIds = action!.result?.messageIds ?? [];
      // Moving the same ids again changes nothing: a retry, or a batch a killed worker left queued.
      const change = changeOf(operation, action!.result?.labelId);
      await withMailbox(accountId, (mailbox) => mailbox.batchModify(messageIds, change));
      await transitionAction(db, { id: action!.id, from: ['queued'], to: 'done' });
      return { moved: messageIds.length, actionId: action!.id };
    },
  };
}
