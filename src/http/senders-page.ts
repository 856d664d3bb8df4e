// The senders page, beside the approvals list (GET /approvals/senders?token=…&account=…): who sends
// what, per sender or domain, sortable, with the "newsletters I never open" filter (docs/cleanup.md).
// Read-only; server-rendered without script; every value goes through escapeHtml.
import { SENDER_SORTS, type SenderFigures, type SendersQuery } from '../cleanup/senders.js';
import { escapeHtml, layout } from './approvals-page.js';

export const SENDERS_PATH = '/approvals/senders';

export interface SendersView {
  token: string;
  accounts: { id: string; email: string }[];
  account?: { id: string; email: string };
  query: Omit<SendersQuery, 'accountId' | 'since'> & { since: string };
  rows: SenderFigures[];
  tookMs: number;
}

/** The query string of the page for these settings (the token and account kept). */
function href(view: SendersView, patch: Record<string, string | undefined>): string {
  const params = new URLSearchParams({ token: view.token, ...(view.account ? { account: view.account.email } : {}), since: view.query.since, by: view.query.by ?? 'sender', sort: view.query.sort ?? 'messages' });
  if (view.query.filter) params.set('filter', view.query.filter);
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) params.delete(k);
    else params.set(k, v);
  }
  return `${SENDERS_PATH}?${params.toString()}`;
}

function row(s: SenderFigures): string {
  return `<tr><td>${escapeHtml(s.key || '(no sender)')}</td><td>${s.messages}</td><td>${Math.round(s.unreadShare * 100)}%</td><td>${s.repliedTo}</td>` +
    `<td>${escapeHtml(s.category || '–')}</td><td>${s.listUnsubscribe ? 'yes' : 'no'}</td><td>${escapeHtml(s.lastAt.slice(0, 10))}</td></tr>`;
}

export function renderSendersPage(view: SendersView): string {
  const accounts = view.accounts.map((a) => `<a href="${escapeHtml(href(view, { account: a.email }))}">${escapeHtml(a.email)}</a>`).join(' · ');
  if (!view.account) return layout('Senders', `<h1>Senders</h1><p>Choose an account: ${accounts || 'none connected'}</p>`);
  const sorts = SENDER_SORTS.map((s) => (s === (view.query.sort ?? 'messages') ? `<strong>${s}</strong>` : `<a href="${escapeHtml(href(view, { sort: s }))}">${s}</a>`)).join(' · ');
  const by = view.query.by === 'domain' ? `<a href="${escapeHtml(href(view, { by: 'sender' }))}">per sender</a> · <strong>per domain</strong>` : `<strong>per sender</strong> · <a href="${escapeHtml(href(view, { by: 'domain' }))}">per domain</a>`;
  const filter = view.query.filter
    ? `<strong>newsletters I never open</strong> · <a href="${escapeHtml(href(view, { filter: undefined }))}">everyone</a>`
    : `<strong>everyone</strong> · <a href="${escapeHtml(href(view, { filter: 'never-opened' }))}">newsletters I never open</a>`;
  const table = view.rows.length
    ? `<div class="scroll"><table><thead><tr><th>${view.query.by === 'domain' ? 'domain' : 'sender'}</th><th>messages</th><th>unread</th><th>replied to</th><th>category</th><th>List-Unsubscribe</th><th>last</th></tr></thead>
<tbody>
${view.rows.map(row).join('\n')}
</tbody></table></div>`
    : '<p>No mail in this window.</p>';
  return layout(
    'Senders',
    `<h1>Senders of ${escapeHtml(view.account.email)}</h1>
<p><a href="/approvals?token=${escapeHtml(encodeURIComponent(view.token))}">Approvals</a> · accounts: ${accounts}</p>
<p>since ${escapeHtml(view.query.since)} · ${by} · sort: ${sorts} · ${filter}</p>
${table}
<p><small>${view.rows.length} rows in ${view.tookMs} ms. Unsubscribe: <code>npm run cli -- cleanup unsubscribe &lt;sender&gt; --account ${escapeHtml(view.account.email)}</code></small></p>`,
    'list',
  );
}
