// The thread workflow's rules, pair by pair: for every state and every kind of event, the step it
// leads to (or 'ignore' for a refused pair). The expected table is written out here on its own,
// so a change to src/thread/transitions.ts shows up as the cells it changes.
import { describe, expect, it } from 'vitest';
import { THREAD_STATES, type LabelRole, type ThreadEvent, type ThreadState } from '../../src/thread/contracts.js';
import { kindOf, nextStep, stepFor, TRANSITIONS, type EventKind, type Step } from '../../src/thread/transitions.js';

const STATES = ['pending', 'skipped', 'needs_response', 'drafted', 'rework_requested', 'action_required', 'awaiting_reply', 'sent', 'archived', 'discarded'] as const;

const c = 'classify';
const x = 'ignore';
const k = 'check_draft';
const a = 'archive';
const r = 'refuse_rework';
const d = 'draft_on_request';
const l = 'recheck_labels';
const m = 'mark_replied';
const p = 'check_approval_draft';
const da = 'decide_action';
const due = 'action_due';
const rc = 'reclassify';
const st = 'set_timer';
const ct = 'cancel_timer';
const us = 'unsnooze_and_classify';
const rs = 'return_from_snooze';
const rm = 'remind';
const sl = 'send_later';
const pa = 'propose_actions';

// columns:                   pending     skipped     needs_resp. drafted     rework_req. action_req. awaiting_reply sent archived discarded
const EXPECTED: Record<EventKind, Step[]> = {
  inbound_mail:            [c,          c,          x,          c,          x,          c,          x, x, x, x],
  redelivered_mail:        [x,          x,          x,          x,          x,          x,          x, x, x, x],
  draft_message:           [x,          x,          x,          x,          x,          x,          x, x, x, x],
  user_replied:            [m,          m,          x,          x,          x,          m,          m, x, x, x],
  draft_maybe_sent:        [k,          k,          k,          k,          k,          k,          k, x, x, x],
  draft_gone:              [k,          k,          k,          k,          k,          k,          k, x, x, x],
  stale_draft_gone:        [x,          x,          x,          x,          x,          x,          x, x, x, x],
  done_label:              [a,          a,          a,          a,          a,          a,          a, x, x, x],
  rework_label:            [r,          r,          r,          'rework',   r,          r,          r, x, x, x],
  needs_response_label:    [d,          d,          d,          'clear_needs_response', d, d,      d, x, x, x],
  other_labels:            [x,          x,          x,          x,          x,          x,          x, x, x, x],
  labels_to_recheck:       [l,          l,          l,          l,          l,          l,          l, x, x, x],
  own_send:                [x,          x,          x,          x,          x,          x,          x, x, x, x],
  approval_draft_maybe_sent: [p,        p,          p,          p,          p,          p,          p, x, x, x],
  approval_draft_gone:     [p,          p,          p,          p,          p,          p,          p, x, x, x],
  action_decision:         [da,         da,         da,         da,         da,         da,         da, x, x, x],
  action_due:              [due,        due,        due,        due,        due,        due,        due, x, x, x],
  reclassify_request:      [rc,         rc,         rc,         rc,         rc,         rc,         rc, x, x, x],
  reply_arrived:           [x,          x,          x,          x,          x,          x,          'end_wait_and_classify', x, x, x],
  mail_while_snoozed:      [us,         us,         x,          us,         x,          us,         us, x, x, x],
  timer_request:           [st,         st,         st,         st,         st,         st,         st, x, x, x],
  timer_cancel:            [ct,         ct,         ct,         ct,         ct,         ct,         ct, x, x, x],
  follow_up_due:           [x,          x,          x,          x,          x,          x,          'follow_up', x, x, x],
  snooze_due:              [rs,         rs,         rs,         rs,         rs,         rs,         rs, x, x, x],
  remind_due:              [rm,         rm,         rm,         rm,         rm,         rm,         rm, x, x, x],
  send_later_due:          [sl,         sl,         sl,         sl,         sl,         sl,         sl, x, x, x],
  stale_wake:              [x,          x,          x,          x,          x,          x,          x, x, x, x],
  agent_proposal:          [pa,         pa,         pa,         pa,         pa,         pa,         pa, x, x, x],
};

const pairs = (Object.keys(EXPECTED) as EventKind[]).flatMap((kind) =>
  STATES.map((state, i) => ({ state: state as ThreadState, kind, step: EXPECTED[kind][i]! })),
);

describe('thread transitions', () => {
  it('cover every state and every kind of event', () => {
    expect([...STATES].sort()).toEqual([...THREAD_STATES].sort());
    expect(Object.keys(TRANSITIONS).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(pairs.filter((p) => p.step !== 'ignore'))('$state + $kind → $step', ({ state, kind, step }) => {
    expect(stepFor(state, kind)).toBe(step);
  });

  it.each(pairs.filter((p) => p.step === 'ignore'))('$state + $kind is refused (ignored)', ({ state, kind }) => {
    expect(stepFor(state, kind)).toBe('ignore');
  });
});

describe('what an event means for the thread', () => {
  const facts = (more: Partial<Parameters<typeof kindOf>[1]> = {}) => ({
    state: 'drafted' as const,
    handledMessageIds: ['m1'],
    openActions: [],
    sentByUs: [],
    ...more,
  });
  const snooze = { actionId: 'w1', kind: 'snooze' as const, at: 10, by: 'user' as const };
  const waitingDraft = { id: 'a1', kind: 'auto_reply' as const, state: 'awaiting_approval' as const, dueAt: 0, draftId: 'r9', draftMessageId: 'd9' };
  const labels = (added: LabelRole[], reconcile?: boolean): ThreadEvent => ({
    type: 'labels_changed',
    messageId: 'm1',
    changeId: 'h1',
    added,
    removed: [],
    ...(reconcile ? { reconcile } : {}),
  });

  it.each<[string, ThreadEvent, Partial<Parameters<typeof kindOf>[1]>, EventKind]>([
    ['new inbound mail', { type: 'message_added', messageId: 'm2', labelIds: ['INBOX'] }, {}, 'inbound_mail'],
    ['mail already classified', { type: 'message_added', messageId: 'm1', labelIds: ['INBOX'] }, {}, 'redelivered_mail'],
    ['a draft message', { type: 'message_added', messageId: 'd2', labelIds: ['DRAFT'] }, {}, 'draft_message'],
    ['sent mail while our draft is there', { type: 'message_added', messageId: 's1', labelIds: ['SENT'] }, { draftId: 'r1' }, 'draft_maybe_sent'],
    ['sent mail without our draft', { type: 'sent_seen', messageId: 's1' }, {}, 'user_replied'],
    ['our draft message deleted', { type: 'draft_gone', messageId: 'd1' }, { draftId: 'r1', draftMessageId: 'd1' }, 'draft_gone'],
    ['an older draft message deleted', { type: 'draft_gone', messageId: 'd0' }, { draftId: 'r1', draftMessageId: 'd1' }, 'stale_draft_gone'],
    ['a draft deleted when we have none', { type: 'draft_gone', messageId: 'd1' }, {}, 'stale_draft_gone'],
    ['Done with Rework', labels(['rework', 'done']), {}, 'done_label'],
    ['Rework with Needs Response', labels(['needsResponse', 'rework']), {}, 'rework_label'],
    ['Needs Response', labels(['needsResponse']), {}, 'needs_response_label'],
    ['a removal only', labels([]), {}, 'other_labels'],
    ['labels found by a gap repair', labels(['done'], true), {}, 'labels_to_recheck'],
    ['our own auto-reply arriving', { type: 'message_added', messageId: 's2', labelIds: ['SENT'] }, { sentByUs: ['s2'], draftId: 'r1' }, 'own_send'],
    ['sent mail while an auto-reply waits as a draft', { type: 'sent_seen', messageId: 's3' }, { openActions: [waitingDraft] }, 'approval_draft_maybe_sent'],
    ['the approval draft deleted', { type: 'draft_gone', messageId: 'd9' }, { openActions: [waitingDraft] }, 'approval_draft_gone'],
    ['a scheduled send keeps no draft watch', { type: 'draft_gone', messageId: 'd9' }, { openActions: [{ ...waitingDraft, state: 'scheduled' }] }, 'stale_draft_gone'],
    ['an approval', { type: 'action_decision', actionId: 'a1', decision: 'approve', by: 'cli' }, {}, 'action_decision'],
    ['an action coming due', { type: 'action_due', actionId: 'a1' }, {}, 'action_due'],
    ['the user asking to classify again', { type: 'reclassify', requestId: 'q1' }, {}, 'reclassify_request'],
    ['the other side answering while the thread awaits a reply', { type: 'message_added', messageId: 'm5', labelIds: ['INBOX'] }, { state: 'awaiting_reply' }, 'reply_arrived'],
    ['new mail in a snoozed thread', { type: 'message_added', messageId: 'm5', labelIds: ['INBOX'] }, { wakes: [snooze] }, 'mail_while_snoozed'],
    ['new mail in a snoozed thread that awaits a reply', { type: 'message_added', messageId: 'm5', labelIds: ['INBOX'] }, { state: 'awaiting_reply', wakes: [snooze] }, 'mail_while_snoozed'],
    ['a snooze asked for', { type: 'timer_request', requestId: 'q2', by: 'user', request: { kind: 'snooze', at: 5 } }, {}, 'timer_request'],
    ['a send later asked for', { type: 'timer_request', requestId: 'q2', by: 'label', request: { kind: 'send_later', at: 5 } }, {}, 'timer_request'],
    ['unsnooze', { type: 'timer_request', requestId: 'q3', by: 'user', request: { kind: 'unsnooze' } }, { wakes: [snooze] }, 'timer_cancel'],
    ['cancel', { type: 'timer_request', requestId: 'q4', by: 'user', request: { kind: 'cancel', timer: 'remind' } }, {}, 'timer_cancel'],
    ['the snooze coming due', { type: 'wake', actionId: 'w1' }, { wakes: [snooze] }, 'snooze_due'],
    ['the follow-up coming due', { type: 'wake', actionId: 'w2' }, { wakes: [{ ...snooze, actionId: 'w2', kind: 'follow_up' }] }, 'follow_up_due'],
    ['a wake cancelled meanwhile', { type: 'wake', actionId: 'w1' }, {}, 'stale_wake'],
    ['a scheduled run proposes an archive', { type: 'agent_proposal', requestId: 'r1', messageId: 'm1', sender: 'a@b.example', subject: 's', actions: [{ kind: 'archive', reason: { source: 'agent', profile: 'brief', step: 1 } }], by: 'schedule s' }, {}, 'agent_proposal'],
  ])('%s', (_what, event, more, kind) => {
    expect(kindOf(event, facts(more))).toBe(kind);
  });

  it('leads a redelivered message nowhere, whatever the state', () => {
    for (const state of STATES) {
      expect(nextStep({ state, handledMessageIds: ['m1'], openActions: [], sentByUs: [] }, { type: 'message_added', messageId: 'm1', labelIds: ['INBOX'] }).step).toBe('ignore');
    }
  });
});
