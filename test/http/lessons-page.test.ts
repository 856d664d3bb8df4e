// The lessons on the approvals page, over real HTTP against a real Postgres (a scratch database): a
// proposal shows with its evidence and its dry run, escaped; accept and reject need the lesson's
// signed link, the session cookie and its CSRF token (an action's link or another lesson's token is
// refused); accepting writes the triage lesson's rule. The decision itself is `acceptLesson`, as
// the CLI's (test/learning/triage-lessons.test.ts covers it end to end).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveApprovalKeys, signLink } from '../../src/actions/approval-links.js';
import { setCategoryActions } from '../../src/actions/journal.js';
import { uuid7 } from '../../src/db/uuid7.js';
import { approvalsRoutes } from '../../src/http/approvals-routes.js';
import { startHttpServer, type HttpServer } from '../../src/shared/http-server.js';
import { deriveTriageLessons } from '../../src/learning/triage-lessons.js';
import { listLessons, loadLesson } from '../../src/learning/memory.js';
import { freePort } from '../../src/shared/free-port.js';
import { openJournal, seedAction } from '../helpers/approvals.js';

const TOKEN = 'operator-token-for-the-lessons-test';
const keys = deriveApprovalKeys('lessons-page-secret-of-at-least-32-characters');
const HOSTILE = '<img src=x onerror=alert(1)>';
const sender = 'news@shop.example';
const settings = { enabled: true, triageLessonAfter: 2, lookbackMs: 60 * 86_400_000, dryRunWindowMs: 30 * 86_400_000 };
let journal: Awaited<ReturnType<typeof openJournal>>;
let server: HttpServer;

beforeAll(async () => {
  journal = await openJournal('lessons-page@durable-inbox.test');
  await setCategoryActions(journal.db, journal.accountId, 'newsletter', [{ kind: 'add_label', argument: 'Newsletters' }, { kind: 'archive' }]);
  await journal.db.query(`INSERT INTO rules (id, scope, scope_ref, kind, action, priority) VALUES ($1, 'domain', 'shop.example', 'deterministic', 'newsletter', 0)`, [uuid7()]);
  for (const t of ['t1', 't2']) {
    await journal.db.query(`INSERT INTO threads (id, account_id, gmail_thread_id, state, category, updated_at) VALUES ($1, $2, $3, 'done', 'newsletter', now())`, [uuid7(), journal.accountId, t]);
    await seedAction(journal.db, { accountId: journal.accountId, threadId: t, kind: 'archive', state: 'undone', sender, subject: `${HOSTILE} ${t}`, reason: { source: 'rule', ruleId: 'r' } });
  }
  const port = await freePort();
  server = await startHttpServer({
    host: '127.0.0.1',
    port,
    routes: approvalsRoutes({
      db: journal.db,
      decide: async () => ({ ok: false, message: 'not in this test', action: null }),
      keys: async () => keys,
      settings: { publicBaseUrl: `http://127.0.0.1:${port}`, linkTtlMs: 3600_000, operatorToken: TOKEN },
      learning: { enabled: true, dryRunWindowMs: settings.dryRunWindowMs, propose: async () => void (await deriveTriageLessons(journal.db, { accountId: journal.accountId, settings })) },
    }),
  });
});

afterAll(async () => {
  await server?.close();
  await journal?.close();
});

/** The list page as a browser gets it: its HTML and session cookie. */
async function listPage(): Promise<{ html: string; cookie: string }> {
  const res = await fetch(`${server.url}/approvals?token=${TOKEN}`);
  expect(res.status).toBe(200);
  return { html: await res.text(), cookie: res.headers.get('set-cookie')!.split(';')[0]! };
}

function formOf(html: string, lessonId: string): { action: string; fields: Record<string, string> } {
  const at = html.indexOf(`data-lesson-id="${lessonId}"`);
  const form = /<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(html.slice(at))!;
  const fields = Object.fromEntries([...form[2]!.matchAll(/name="(exp|sig|csrf)" value="([^"]+)"/g)].map((m) => [m[1]!, m[2]!]));
  return { action: form[1]!, fields };
}

const post = (path: string, cookie: string, fields: Record<string, string>) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie }, body: new URLSearchParams(fields).toString(), redirect: 'manual' });

describe('lessons on the approvals page', () => {
  it('shows a proposal with its evidence and its dry run, escaped, and accepts it through the protected form', async () => {
    const { html, cookie } = await listPage();
    const [lesson] = await listLessons(journal.db, { state: 'proposed' });
    expect(lesson).toBeDefined();
    expect(html).toContain('Lessons waiting for you (1)');
    expect(html).toContain(`mail from ${sender}: do not archive`);
    expect(html).not.toContain(HOSTILE);
    expect(html).toContain('&#60;img src=x onerror=alert(1)&#62; t1');
    expect(html).toMatch(/<span class="recategorised">0<\/span> categorised differently, <span class="acted">2<\/span> acted on differently/);
    const { action, fields } = formOf(html, lesson!.id);

    // Without the session cookie, with another lesson's subject, or with an action's link: refused, nothing changes.
    expect((await post(action, '', { ...fields, decision: 'accept' })).status).toBe(403);
    const actionLink = signLink(keys, lesson!.id, Date.now() + 60_000);
    expect((await post(action, cookie, { ...fields, exp: String(actionLink.exp), sig: actionLink.sig, decision: 'accept' })).status).toBe(403);
    expect((await fetch(`${server.url}${action}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: 'https://evil.example' }, body: new URLSearchParams({ ...fields, decision: 'accept' }).toString() })).status).toBe(403);
    expect((await loadLesson(journal.db, lesson!.id))!.state).toBe('proposed');

    const accepted = await post(action, cookie, { ...fields, decision: 'accept' });
    expect(accepted.status).toBe(200);
    expect(await accepted.text()).toContain('Lesson accepted.');
    const after = (await loadLesson(journal.db, lesson!.id))!;
    expect(after.state).toBe('accepted');
    const [rule] = await journal.db.query<{ scope_ref: string; actions: unknown }>(`SELECT scope_ref, actions FROM rules WHERE id = $1`, [after.ruleId]);
    expect(rule).toEqual({ scope_ref: sender, actions: [{ kind: 'add_label', argument: 'Newsletters' }] });

    // Its signed link opens the lesson; a second accept is no error; the list no longer offers it.
    const shown = await fetch(`${server.url}${action}?exp=${fields.exp}&sig=${fields.sig}`);
    expect(await shown.text()).toContain('<span class="state">accepted</span>');
    expect(await (await post(action, cookie, { ...fields, decision: 'accept' })).text()).toContain('The lesson was accepted already.');
    expect((await listPage()).html).toContain('Lessons waiting for you (0)');
  });
});
