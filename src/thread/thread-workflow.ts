// One workflow per Gmail thread: classify → draft → wait for the user (Rework, Done, Needs
// Response) → notice the reply was sent. The workflow holds the thread's state; activities do
// the Gmail, LLM and Postgres side effects with retries.
import {
  ActivityFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  deprecatePatch,
  log,
  patched,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type {
  GmailActivities,
  LlmActivities,
  LlmDraft,
  StoreActivities,
  ThreadContent,
} from './activity-contracts.js';
import { InboxAccountId, InboxCategory, InboxState } from '../temporal/search-attributes.js';
import { draftEditedByUser, extractReworkInstructions } from './rework.js';
import {
  failureType,
  GIVE_UP_TYPES,
  proxyGmailActivities,
  proxyLlmActivities,
  STORE_ACTIVITY_OPTIONS,
} from './activity-proxies.js';
import {
  draftGoneSignal,
  labelsChangedSignal,
  newMessageSignal,
  sentSeenSignal,
  threadStatusQuery,
} from './signals.js';
import {
  CLOSED_STATES,
  eventKey,
  opensThread,
  type CarriedThreadState,
  type Category,
  type DecisionRecord,
  type ThreadEvent,
  type ThreadMemory,
  type ThreadState,
  type ThreadStatus,
  type ThreadWorkflowInput,
} from './contracts.js';

/**
 * Retired: it sent runs started before v2 (local Postgres steps, three task round trips per draft)
 * to a frozen copy of the v1 code. Nothing released ever ran v1, so the copy is gone; the marker
 * stays deprecated until no recorded history carries it, then the call goes too.
 */
export const THREAD_V2_PATCH = 'thread-v2-local-store-triage';

/** New mail in a drafted thread checks whether the user edited the draft, and then keeps it. */
export const KEEP_EDITED_DRAFT_PATCH = 'keep-edited-draft';

/** Needs Response on a thread that already has our draft: the label is taken off. */
export const CLEAR_ANSWERED_NEEDS_RESPONSE_PATCH = 'clear-answered-needs-response';

const SEEN_EVENTS_KEPT = 500;
const HANDLED_KEPT = 200;

export async function threadWorkflow(input: ThreadWorkflowInput): Promise<ThreadStatus> {
  deprecatePatch(THREAD_V2_PATCH);
  const { accountId, threadId, settings } = input;
  const carried = input.carried;

  const gmail = proxyGmailActivities<GmailActivities>(settings);
  const llm = proxyLlmActivities<LlmActivities>(settings);
  // Postgres reads and writes are short and run on this worker: local activities cost one
  // marker in history instead of a task round trip through the server.
  const store = proxyLocalActivities<StoreActivities>(STORE_ACTIVITY_OPTIONS);

  // ---- state held by the workflow ----------------------------------------------------------
  // A fresh run resumes what earlier runs left in Postgres (a closed run's id protection does
  // not last forever); continue-as-new hands the state over directly.
  const remembered = carried ?? (await store.loadThread({ accountId, threadId }));
  const resumable = remembered && !CLOSED_STATES.includes(remembered.state) ? remembered : undefined;
  let state: ThreadState = resumable?.state ?? 'pending';
  let category: Category | undefined = resumable?.category;
  let confidence: number | undefined = resumable?.confidence;
  let draftId = resumable?.draftId;
  let draftMessageId = resumable?.draftMessageId;
  let draftCreatedAt = resumable?.draftCreatedAt;
  let reworkCount = resumable?.reworkCount ?? 0;
  let lastGeneratedDraft: string | undefined = carried?.lastDraftBody;
  // Handled message ids survive even a closed run: a redelivered message is never processed twice.
  const handled: string[] = remembered?.handledMessageIds ?? [];
  const decisions: DecisionRecord[] = carried?.decisions ?? [];
  let savedDecisions = decisions.length;
  // What Postgres holds already: the row is written once per handled event, only when it changed.
  let savedMemory = carried ? JSON.stringify(memory()) : '';
  let indexed = { state: carried ? state : 'pending', category: carried ? category : undefined };
  const queue: ThreadEvent[] = carried?.pending ?? [];
  let handling = false;
  const seen = new Set<string>(carried?.seenEvents ?? []);

  function memory(): ThreadMemory {
    return {
      state,
      category,
      confidence,
      draftId,
      draftMessageId,
      draftCreatedAt,
      reworkCount,
      handledMessageIds: handled.slice(-HANDLED_KEPT),
    };
  }

  const enqueue = (event: ThreadEvent) => {
    const key = eventKey(event);
    if (seen.has(key)) return; // duplicate delivery: changes nothing
    seen.add(key);
    queue.push(event);
  };
  setHandler(newMessageSignal, enqueue);
  setHandler(labelsChangedSignal, enqueue);
  setHandler(draftGoneSignal, enqueue);
  setHandler(sentSeenSignal, enqueue);
  setHandler(threadStatusQuery, () => status());

  function status(): ThreadStatus {
    const pendingEvents = queue.length + (handling ? 1 : 0);
    return { accountId, threadId, state, category, confidence, draftId, reworkCount, pendingEvents, decisions };
  }

  function decide(decision: Omit<DecisionRecord, 'at'>): void {
    decisions.push({ at: new Date().toISOString(), ...decision });
  }

  /** The new state, visible at once in the Web UI (search attributes); saved by persist(). */
  function transition(next: ThreadState): void {
    state = next;
    if (indexed.state === state && indexed.category === category) return;
    indexed = { state, category };
    upsertSearchAttributes([
      { key: InboxAccountId, value: accountId },
      { key: InboxState, value: state },
      ...(category ? [{ key: InboxCategory, value: category }] : []),
    ]);
  }

  /** Writes the thread row and the new decisions, when anything changed since the last write. */
  async function persist(): Promise<void> {
    const snapshot = memory();
    const fingerprint = JSON.stringify(snapshot);
    if (fingerprint === savedMemory && savedDecisions === decisions.length) return;
    await store.saveThread({
      accountId,
      threadId,
      workflowRunId: workflowInfo().runId,
      memory: snapshot,
      closed: CLOSED_STATES.includes(state),
      decisions: decisions.slice(savedDecisions).map((decision, i) => ({ seq: savedDecisions + i, decision })),
    });
    savedMemory = fingerprint;
    savedDecisions = decisions.length;
  }

  async function giveUp(reason: string): Promise<void> {
    decide({ kind: 'action_required', source: 'system', detail: reason });
    await gmail.changeLabels({
      accountId,
      threadId,
      labels: settings.labels,
      add: ['actionRequired'],
      remove: ['rework', 'needsResponse'],
    });
    transition('action_required');
  }

  /** Runs an LLM step; when its retries are spent on a give-up error, labels Action Required. */
  async function llmStep<T>(what: string, step: () => Promise<T>): Promise<T | undefined> {
    try {
      return await step();
    } catch (err) {
      const type = failureType(err);
      if (type && GIVE_UP_TYPES.includes(type)) {
        await giveUp(`${what} failed: ${type}: ${err instanceof ActivityFailure ? err.cause?.message : ''}`);
        return undefined;
      }
      throw err;
    }
  }

  // ---- the business process ----------------------------------------------------------------

  async function classifyAndMaybeDraft(): Promise<void> {
    const thread = await gmail.readThread({ accountId, threadId });
    if (!thread) return threadGone();
    const email = thread.latestInbound;
    if (!email) return; // the user wrote last: nothing to answer
    if (handled.includes(email.messageId)) return; // already classified (a redelivery)
    handled.push(email.messageId);

    // A draft the user has edited is their work: new mail in the thread does not overwrite it (and
    // no reply is written for it). Rework rewrites it on request, with the new mail.
    const keepDraft = state === 'drafted' && draftId !== undefined && patched(KEEP_EDITED_DRAFT_PATCH) && (await draftIsUsers());

    const rules = await store.classifyByRules({ accountId, email });
    for (const reason of rules.skipped ?? []) decide({ kind: 'rule_skipped', source: 'system', detail: reason });
    let written: LlmDraft | undefined; // the reply, when the LLM wrote it along with the classification
    if (rules.decided) {
      category = rules.category;
      confidence = 1;
      decide({ kind: 'classify', source: 'rules', ruleId: rules.ruleId, detail: `${rules.category}: ${rules.reason}` });
    } else {
      const triage = await llmStep('classification', () =>
        llm.triageWithLlm({
          accountId,
          email,
          thread: thread.messages,
          instructions: rules.instructions,
          replyContext: keepDraft ? undefined : thread.replyContext,
          outputAttempts: settings.llmAttempts,
        }),
      );
      if (!triage) return;
      const verdict = triage.classification;
      written = triage.draft;
      category = verdict.category;
      confidence = verdict.confidence;
      decide({
        kind: 'classify',
        source: 'llm',
        detail: `${verdict.category} (${verdict.confidence.toFixed(2)}): ${verdict.reason}`,
        model: verdict.model,
        tokensIn: verdict.tokensIn,
        tokensOut: verdict.tokensOut,
      });
    }
    upsertMemo({ summary: `${category}: ${thread.subject}`.slice(0, 200) });

    if (category === 'needs_response' && keepDraft) {
      decide({
        kind: 'draft_kept',
        source: 'system',
        detail: `kept the draft you edited; it does not answer message ${email.messageId} yet (add Rework to have it rewritten)`,
      });
      transition('drafted');
    } else if (category === 'needs_response') {
      transition('needs_response');
      await draftReply(thread, rules.instructions, undefined, written);
    } else if (state !== 'drafted') {
      decide({ kind: 'skip', source: 'system', detail: `no reply needed (${category})` });
      transition('skipped');
    } else {
      transition('drafted'); // a new message that needs no answer: the draft stays
    }
  }

  async function draftReply(
    thread: ThreadContent,
    instructions: string[],
    rework?: { instructions: string; previousDraft: string },
    written?: LlmDraft,
  ): Promise<void> {
    const replyTo = thread.latestInbound ?? thread.messages[thread.messages.length - 1];
    if (!replyTo) return;
    const draft = written ?? (await writeReply(thread, replyTo.from, instructions, rework));
    if (!draft) return;
    const ref = await gmail.placeDraft({
      accountId,
      threadId,
      draftId,
      body: draft.body,
      replyTo,
      labels: settings.labels,
      add: ['outbox'],
      remove: ['needsResponse', 'rework', 'actionRequired'],
    });
    draftId = ref.draftId;
    draftMessageId = ref.messageId;
    draftCreatedAt ??= ref.internalDate;
    lastGeneratedDraft = draft.body;
    decide({
      kind: rework ? 'rework' : 'draft',
      source: 'llm',
      detail: rework ? `revised with: ${rework.instructions}` : `draft ${ref.draftId}`,
      model: draft.model,
      tokensIn: draft.tokensIn,
      tokensOut: draft.tokensOut,
    });
    transition('drafted');
  }

  /** Whether the user edited our draft; when we cannot tell what we wrote, it is taken to be theirs. */
  async function draftIsUsers(): Promise<boolean> {
    const current = await gmail.readDraft({ accountId, draftId: draftId! });
    if (!current) return false; // sent or deleted: its own event follows, and a new draft may be written
    draftMessageId = current.messageId;
    return lastGeneratedDraft === undefined || draftEditedByUser(current.body, lastGeneratedDraft);
  }

  async function writeReply(
    thread: ThreadContent,
    sender: string,
    instructions: string[],
    rework?: { instructions: string; previousDraft: string },
  ): Promise<LlmDraft | undefined> {
    const context = thread.replyContext ?? (await gmail.gatherReplyContext({ accountId, sender }));
    return llmStep(rework ? 'rework' : 'draft', () =>
      llm.writeDraft({
        accountId,
        thread: thread.messages,
        toneExamples: context.toneExamples,
        signature: context.signature,
        instructions,
        reworkInstructions: rework?.instructions,
        previousDraft: rework?.previousDraft,
        outputAttempts: settings.llmAttempts,
      }),
    );
  }

  async function rework(): Promise<void> {
    if (!draftId) return;
    if (reworkCount >= settings.maxReworks) {
      return giveUp(`rework limit reached (${settings.maxReworks})`);
    }
    transition('rework_requested');
    const current = await gmail.readDraft({ accountId, draftId });
    if (!current) return draftDisappeared();
    draftMessageId = current.messageId;
    const { instructions } = extractReworkInstructions(current.body, lastGeneratedDraft ?? '');
    const thread = await gmail.readThread({ accountId, threadId });
    if (!thread) return threadGone();
    reworkCount += 1;
    await draftReply(thread, [], {
      instructions: instructions ?? 'Improve the draft.',
      previousDraft: lastGeneratedDraft ?? current.body,
    });
  }

  async function archive(): Promise<void> {
    await gmail.changeLabels({
      accountId,
      threadId,
      labels: settings.labels,
      add: [],
      remove: ['outbox', 'rework', 'done', 'needsResponse', 'actionRequired'],
      archive: true,
    });
    decide({ kind: 'archive', source: 'user', detail: 'Done label: archived' });
    transition('archived');
  }

  /** Our draft is gone: the user sent it, or threw it away. */
  async function draftDisappeared(): Promise<void> {
    const sent = await gmail.findSentReply({ accountId, threadId, afterMs: draftCreatedAt ?? 0 });
    await gmail.changeLabels({ accountId, threadId, labels: settings.labels, add: [], remove: ['outbox', 'rework'] });
    if (sent) {
      decide({ kind: 'sent', source: 'user', detail: `sent as ${sent.messageId}` });
      transition('sent');
    } else {
      decide({ kind: 'discarded', source: 'user', detail: 'draft deleted without sending' });
      transition('discarded');
    }
  }

  async function threadGone(): Promise<void> {
    decide({ kind: 'discarded', source: 'system', detail: 'thread no longer exists' });
    transition('discarded');
  }

  async function handle(event: ThreadEvent): Promise<void> {
    switch (event.type) {
      case 'message_added': {
        if (event.labelIds.includes('DRAFT')) return; // drafts (ours or the user's) are not mail
        if (event.labelIds.includes('SENT')) return handle({ type: 'sent_seen', messageId: event.messageId });
        if (handled.includes(event.messageId)) return;
        if (state === 'pending' || state === 'skipped' || state === 'drafted' || state === 'action_required') {
          return classifyAndMaybeDraft();
        }
        return;
      }
      case 'labels_changed': {
        if (event.reconcile) {
          const onThread = await gmail.threadLabelRoles({ accountId, threadId, labels: settings.labels });
          if (!onThread) return threadGone();
          const stillThere = event.added.filter((role) => onThread.includes(role));
          if (stillThere.length === 0) return;
          return handle({ ...event, added: stillThere, reconcile: false });
        }
        if (event.added.includes('done')) return archive();
        if (event.added.includes('rework')) {
          if (state === 'drafted') return rework();
          decide({ kind: 'label', source: 'user', detail: `Rework ignored in state ${state}` });
          return;
        }
        if (event.added.includes('needsResponse')) {
          if (draftId && state === 'drafted') {
            decide({ kind: 'label', source: 'user', detail: 'Needs Response: already drafted' });
            // The draft there answers the request: the label comes off, as it does when we draft.
            if (patched(CLEAR_ANSWERED_NEEDS_RESPONSE_PATCH)) {
              await gmail.changeLabels({ accountId, threadId, labels: settings.labels, add: [], remove: ['needsResponse'] });
            }
            return;
          }
          const thread = await gmail.readThread({ accountId, threadId });
          if (!thread) return threadGone();
          category = 'needs_response';
          decide({ kind: 'classify', source: 'user', detail: 'Needs Response label added by the user' });
          transition('needs_response');
          return draftReply(thread, []);
        }
        return;
      }
      case 'draft_gone': {
        if (!draftId || event.messageId !== draftMessageId) return; // an older version of our draft
        const current = await gmail.readDraft({ accountId, draftId });
        if (current) {
          draftMessageId = current.messageId; // the user edited it: Gmail saved a new message
          return;
        }
        return draftDisappeared();
      }
      case 'sent_seen': {
        if (draftId) {
          const current = await gmail.readDraft({ accountId, draftId });
          if (current) return; // the user replied on their own; our draft is still there
          return draftDisappeared();
        }
        if (state === 'skipped' || state === 'pending' || state === 'action_required') {
          decide({ kind: 'sent', source: 'user', detail: `the user replied (${event.messageId})` });
          transition('sent');
        }
        return;
      }
    }
  }

  // ---- the event loop ------------------------------------------------------------------------
  transition(state); // a run resuming a remembered thread shows its state (ingest indexed 'pending')
  while (!CLOSED_STATES.includes(state)) {
    const timeout = state === 'skipped' ? settings.skippedIdleTimeoutMs : settings.idleTimeoutMs;
    const gotWork = await condition(() => queue.length > 0 || workflowInfo().continueAsNewSuggested, timeout);
    if (!gotWork) {
      log.info('thread idle: closing this run; new mail starts a new one', { state });
      break;
    }
    const event = queue.shift();
    if (event) {
      handling = true;
      await handle(event);
      await persist();
      handling = false;
      continue;
    }
    // History is getting long: carry the state into a fresh run.
    await condition(allHandlersFinished);
    await continueAsNew<typeof threadWorkflow>({ ...input, carried: carry() });
  }
  await persist();
  await condition(allHandlersFinished);
  // Mail that arrived while this run was closing must not be dropped: hand it to a fresh run.
  if (queue.some(opensThread)) await continueAsNew<typeof threadWorkflow>({ ...input, carried: carry() });
  return status();

  function carry(): CarriedThreadState {
    return {
      ...memory(),
      lastDraftBody: lastGeneratedDraft,
      seenEvents: [...seen].slice(-SEEN_EVENTS_KEPT),
      decisions: CLOSED_STATES.includes(state) ? [] : decisions.slice(-50),
      pending: queue.splice(0),
    };
  }
}
