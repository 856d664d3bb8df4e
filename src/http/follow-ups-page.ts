// The approvals page's follow-ups (docs/time.md): threads waiting for an answer to what the user sent,
// with when the follow-up falls due in the account's local time, and those past it (labelled Follow
// Up). A waiting one has a Cancel button, one past due a Stop waiting button (the thread closes as
// sent): the same signed form as an action's. Server-rendered, no script; every value goes through escapeHtml.
import type { JournaledAction } from '../actions/contracts.js';
import { recipientsText } from '../actions/approval-request.js';
import { decisionForm, escapeHtml, type DecisionForm } from './approvals-page.js';

/** The form's decision value: the thread's cancelTimer signal, not an action decision. */
export const CANCEL_FOLLOW_UP = 'cancel_follow_up';

export interface FollowUpCard {
  action: JournaledAction;
  accountEmail: string | null;
  /** When it falls (or fell) due: the account's local time (describeLocal). */
  due: string;
  /** The thread in Gmail. */
  gmailHref: string;
  /** Where the Cancel (Stop waiting) form posts: the action's own signed path. */
  form?: DecisionForm;
}

function row(card: FollowUpCard, followUpLabel: string): string {
  const a = card.action;
  const fellDue = a.state === 'done';
  const status = fellDue ? `<strong>${escapeHtml(followUpLabel)}</strong> since ${escapeHtml(card.due)}` : `waiting until ${escapeHtml(card.due)}`;
  const cancel = card.form ? decisionForm(card.form, [{ value: CANCEL_FOLLOW_UP, label: fellDue ? 'Stop waiting' : 'Cancel follow-up' }]) : '';
  return (
    `<tr data-follow-up-thread="${escapeHtml(a.threadId)}" data-state="${fellDue ? 'due' : 'waiting'}">` +
    `<td class="due">${status}</td>` +
    `<td class="subject"><a href="${escapeHtml(card.gmailHref)}" rel="noreferrer">${escapeHtml(a.subject || a.threadId)}</a>` +
    `<br><small>${escapeHtml(card.accountEmail ?? a.accountId)}</small></td>` +
    `<td class="to">${escapeHtml(recipientsText(a) || '–')}</td>` +
    `<td>${cancel}</td></tr>`
  );
}

/** The section: waiting ones and ones fallen due, soonest first. */
export function followUpsSection(cards: FollowUpCard[], followUpLabel: string): string {
  const due = cards.filter((c) => c.action.state === 'done').length;
  const body =
    cards.length === 0
      ? '<p>No thread is waiting for an answer.</p>'
      : `<div class="table-scroll"><table id="follow-ups">
<thead><tr><th>Follow-up</th><th>Subject (in Gmail)</th><th>Waiting for</th><th></th></tr></thead>
<tbody>
${cards.map((c) => row(c, followUpLabel)).join('\n')}
</tbody>
</table></div>`;
  return `<h2>Awaiting a reply (${cards.length}${due ? `, ${due} past due` : ''})</h2>\n${body}`;
}
