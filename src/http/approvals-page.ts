// The approvals page's HTML: one action with its buttons, the operator's list, and the short pages
// for refusals. Server-rendered, no script; every value from the journal goes through escapeHtml,
// which also drops control characters and bidi overrides (src/shared/display-text.ts).
import type { Decision, JournaledAction } from '../actions/contracts.js';
import { reasonText, recipientsText, replyPreview } from '../actions/approval-request.js';
import { displaySafe } from '../shared/display-text.js';

export function escapeHtml(value: unknown): string {
  return displaySafe(String(value), { multiline: true }).replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** One action as the page shows it, with what its forms need. */
export interface ActionCard {
  action: JournaledAction;
  accountEmail: string | null;
  /** Its own page: a signed link (path and query). */
  href: string;
  /** Where its forms post, and the link fields and CSRF token they carry. */
  form: DecisionForm;
  decisions: Decision[];
}

export interface Outcome {
  ok: boolean;
  message: string;
}

/** Where a decision posts, with its link's expiry and signature and the session's CSRF token. */
export interface DecisionForm {
  action: string;
  exp: number;
  sig: string;
  csrf: string;
}

const BUTTON_LABELS: Record<Decision, string> = { approve: 'Approve', reject: 'Reject', undo: 'Undo' };

const STYLE = `
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #1d1d1f; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
table { border-collapse: collapse; width: 100%; } td, th { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
body.list { max-width: 100rem; } .table-scroll { overflow-x: auto; }
.table-scroll td { overflow-wrap: anywhere; } .table-scroll td.to { min-width: 9rem; } .table-scroll td.why ul { margin: 0; padding-left: 1rem; }
.table-scroll td.preview pre { margin: 0; min-width: 12rem; max-width: 24rem; max-height: 7.5rem; overflow: auto; }
.table-scroll th, .table-scroll td.expires, .table-scroll td.state { white-space: nowrap; overflow-wrap: normal; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .3rem 1rem; } dt { color: #666; } dd { margin: 0; }
pre { white-space: pre-wrap; background: #f5f5f7; padding: .75rem; border-radius: 6px; }
form { display: inline; } button { font: inherit; padding: .3rem .9rem; margin-right: .4rem; cursor: pointer; white-space: nowrap; overflow-wrap: normal; }
.outcome { padding: .6rem .9rem; border-radius: 6px; } .ok { background: #e3f6e8; } .failed { background: #fde8e8; }
.state { font-weight: 600; }
.lesson { border-top: 1px solid #ddd; } .lesson h3 { font-size: 1rem; margin-bottom: 0; } .lesson .says { font-weight: 600; }
.dry-run { background: #f5f5f7; padding: .5rem .75rem; border-radius: 6px; overflow-wrap: anywhere; }`;

export function layout(title: string, body: string, bodyClass?: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(title)} · durable-inbox</title>
<style>${STYLE}</style>
</head>
<body${bodyClass ? ` class="${bodyClass}"` : ''}>
${body}
</body>
</html>
`;
}

function buttons(card: ActionCard): string {
  return decisionForm(card.form, card.decisions.map((d) => ({ value: d, label: BUTTON_LABELS[d] })));
}

/** The signed form that posts one decision (an action's or a lesson's); nothing when none is open. */
export function decisionForm(form: DecisionForm, decisions: { value: string; label: string }[]): string {
  if (decisions.length === 0) return '';
  return `<form method="post" action="${escapeHtml(form.action)}">
<input type="hidden" name="exp" value="${escapeHtml(String(form.exp))}">
<input type="hidden" name="sig" value="${escapeHtml(form.sig)}">
<input type="hidden" name="csrf" value="${escapeHtml(form.csrf)}">
${decisions.map((d) => `<button type="submit" name="decision" value="${escapeHtml(d.value)}">${escapeHtml(d.label)}</button>`).join('')}
</form>`;
}

function what(action: JournaledAction): string {
  return `${escapeHtml(action.kind)}${action.argument !== undefined ? ` <code>${escapeHtml(action.argument)}</code>` : ''}`;
}

/** What the agent read of the mailbox before writing the reply: what the reply may quote. */
function mailboxReadOf(action: JournaledAction): string {
  const read = action.result?.mailboxRead;
  if (!read || read.length === 0) return '';
  return `\n<h2>What the agent read of your mailbox before writing it</h2>\n<ul id="mailbox-read">${read.map((r) => `<li>${escapeHtml(r)}</li>`).join('')}</ul>`;
}

export function renderActionPage(card: ActionCard, outcome?: Outcome): string {
  const { action } = card;
  const rows: [string, string][] = [
    ['Action', what(action)],
    ['State', `<span class="state" id="state">${escapeHtml(action.state)}</span>`],
    ['Account', escapeHtml(card.accountEmail ?? action.accountId)],
    ['Thread', `<code>${escapeHtml(action.threadId)}</code>`],
    ['From', escapeHtml(action.sender || '–')],
    ['To', `<span id="recipients">${escapeHtml(recipientsText(action) || '–')}</span>`],
    ['Subject', escapeHtml(action.subject || '–')],
    ['Proposed by', escapeHtml(reasonText(action.reason))],
    ['Why', action.because.length ? `<ul>${action.because.map((b) => `<li>${escapeHtml(b)}</li>`).join('')}</ul>` : '–'],
    ...(action.note ? [['Note', escapeHtml(action.note)] as [string, string]] : []),
    ...(action.expiresAt && action.state === 'awaiting_approval' ? [['Expires', escapeHtml(action.expiresAt)] as [string, string]] : []),
    ...(action.scheduledFor && action.state === 'scheduled' ? [['Sends at', escapeHtml(action.scheduledFor)] as [string, string]] : []),
    ...(action.decidedBy ? [['Decided by', escapeHtml(action.decidedBy)] as [string, string]] : []),
    ['Proposed', escapeHtml(action.createdAt)],
  ];
  const body = action.kind === 'auto_reply' && action.result?.body !== undefined
    ? `<h2>The reply it would send</h2>\n<pre id="reply">${escapeHtml(action.result.body)}</pre>${mailboxReadOf(action)}`
    : '';
  const banner = outcome
    ? `<p class="outcome ${outcome.ok ? 'ok' : 'failed'}" id="outcome" role="status">${escapeHtml(outcome.message)}</p>`
    : '';
  return layout(
    `${action.kind} – approval`,
    `<h1>${what(action)}</h1>
${banner}
<dl>
${rows.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('\n')}
</dl>
${body}
<p>${buttons(card)}</p>`,
  );
}

/** The list's row: what it asks, enough to decide it here. */
function table(cards: ActionCard[], empty: string): string {
  if (cards.length === 0) return `<p>${escapeHtml(empty)}</p>`;
  const when = (iso: string | undefined) => (iso ? escapeHtml(iso.slice(0, 16).replace('T', ' ')) : '–');
  const row = (c: ActionCard) => {
    const a = c.action;
    const why = a.because.length ? `<ul>${a.because.map((b) => `<li>${escapeHtml(b)}</li>`).join('')}</ul>` : '–';
    const preview = replyPreview(a);
    return (
      `<tr data-action-id="${escapeHtml(a.id)}"><td>${when(a.createdAt)}</td>` +
      `<td><a href="${escapeHtml(c.href)}">${what(a)}</a><br><small>${escapeHtml(c.accountEmail ?? a.accountId)}</small></td>` +
      `<td class="to">${escapeHtml(recipientsText(a) || '–')}</td><td class="subject">${escapeHtml(a.subject || '–')}` +
      `${a.sender ? `<br><small>from ${escapeHtml(a.sender)}</small>` : ''}</td>` +
      `<td class="preview">${preview ? `<pre>${escapeHtml(preview)}</pre>` : '–'}</td>` +
      `<td class="why">${why}<small>${escapeHtml(reasonText(a.reason))}</small></td>` +
      `<td class="expires">${a.state === 'awaiting_approval' ? when(a.expiresAt) : '–'}</td>` +
      `<td class="state">${escapeHtml(a.state)}</td><td>${buttons(c)}</td></tr>`
    );
  };
  return `<div class="table-scroll"><table>
<thead><tr><th>Proposed (UTC)</th><th>Action</th><th>To</th><th>Subject</th><th>What it sends</th><th>Why it waits</th><th>Expires (UTC)</th><th>State</th><th></th></tr></thead>
<tbody>
${cards.map(row).join('\n')}
</tbody>
</table></div>`;
}

/**
 * `followUps`, `lessons`: those sections' HTML (src/http/follow-ups-page.ts, lessons-page.ts), escaped there.
 * `sendersHref`: the senders page beside the list (src/http/senders-page.ts), with the operator token.
 */
export function renderListPage(lists: { pending: ActionCard[]; recent: ActionCard[]; followUps?: string; lessons?: string; sendersHref?: string }): string {
  return layout(
    'Approvals',
    `<h1>Approvals</h1>
${lists.sendersHref ? `<p><a id="senders" href="${escapeHtml(lists.sendersHref)}">Senders: who sends what</a></p>
` : ''}<h2>Waiting for you (${lists.pending.length})</h2>
${table(lists.pending, 'Nothing waits for approval.')}
${lists.followUps ?? ''}
${lists.lessons ?? ''}
<h2>Recent actions</h2>
${table(lists.recent, 'No actions yet.')}`,
    'list',
  );
}

/** A refusal or an error, said plainly. */
export function renderMessagePage(title: string, message: string): string {
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p id="message">${escapeHtml(message)}</p>`);
}
