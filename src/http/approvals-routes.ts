// The approvals page (docs/actions.md):
//   GET  /approvals?token=<operator token>        pending approvals, follow-ups, the last 50 actions
//   GET  /approvals/a/<id>?exp=…&sig=…             one action, from a signed link (Discord's)
//   POST /approvals/a/<id>                         approve / reject / undo it; cancel a waiting follow-up
//   GET|POST /approvals/l/<id>                     one lesson the assistant learned, accept / reject it (lesson-routes.ts)
// A POST needs the link's fields, a CSRF token bound to the link and the browser's session cookie,
// and an Origin (when sent) that is ours; anything less is a 403 that changes nothing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApprovalsSettings, Decision, JournaledAction } from '../actions/contracts.js';
import {
  actionPath,
  operatorTokenMatches,
  signLink,
  verifyLink,
  type ApprovalKeys,
  type SignedLink,
} from '../actions/approval-links.js';
import { accountEmail, openDecisions } from '../actions/approval-request.js';
import type { DecisionOutcome } from '../thread/decide.js';
import { listActions, listFollowUps, loadAction } from '../actions/journal.js';
import { gmailThreadLink } from '../learning/contracts.js';
import { accountTimeZone } from '../accounts/time-settings.js';
import { describeLocal } from '../time/index.js';
import { CANCEL_FOLLOW_UP, followUpsSection, type FollowUpCard } from './follow-ups-page.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { createLogger } from '../shared/log.js';
import { csrfToken, csrfTokenValid, newSession, originAllowed, sessionCookie, sessionOf } from './approvals-csrf.js';
import { renderActionPage, renderListPage, renderMessagePage, type ActionCard, type Outcome } from './approvals-page.js';
import type { Routes } from '../shared/http-server.js';
import { lessonCards, lessonRoutes, type LessonRouteDeps } from './lesson-routes.js';
import { lessonsSection } from './lessons-page.js';
import { listSenders, SENDER_SORTS, type SenderSort } from '../cleanup/senders.js';
import { renderSendersPage, SENDERS_PATH } from './senders-page.js';

const log = createLogger('approvals');

export const APPROVALS_PATH = '/approvals';
const ACTION_PREFIX = `${APPROVALS_PATH}/a/`;
const MAX_FORM_BYTES = 8 * 1024;
const RECENT_ACTIONS = 50;
const DECISIONS: readonly Decision[] = ['approve', 'reject', 'undo'];

export interface ApprovalsRouteDeps {
  db: SqlExecutor;
  /** Carries a decision out (decideAction with the app's client and task queues). */
  decide(actionId: string, decision: Decision, by: string): Promise<DecisionOutcome>;
  /** The link and CSRF keys (resolved on first use: dev mode reads them from .data/). */
  keys(): Promise<ApprovalKeys>;
  settings: Pick<ApprovalsSettings, 'operatorToken' | 'linkTtlMs' | 'publicBaseUrl'>;
  /** The follow-ups' part of the page (threads awaiting a reply); without it the page shows none. */
  followUps?: {
    /** Cancels a waiting follow-up through its thread (cancelFollowUp). */
    cancel(actionId: string): Promise<DecisionOutcome>;
    /** The zone of an account without one (DEFAULT_TIME_ZONE). */
    defaultZone: string;
    /** The Follow Up label's name. */
    label: string;
  };
  /** The lessons' part of the page; without it the page shows actions only. */
  learning?: { dryRunWindowMs: number; enabled: boolean; propose(): Promise<void> };
  now?: () => number;
}

const SECURITY_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  // same-origin, not no-referrer: with no-referrer browsers send `Origin: null` on our own form posts.
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

function sendHtml(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, ...headers, 'content-length': Buffer.byteLength(html) });
  res.end(html);
}

function refuse(res: ServerResponse, status: number, title: string, message: string): void {
  sendHtml(res, status, renderMessagePage(title, message));
}

class FormTooLarge extends Error {}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw new FormTooLarge();
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const LINK_REFUSALS = {
  malformed: 'This link is incomplete or damaged.',
  'bad signature': 'This link is not valid.',
  expired: 'This link has expired. Open the action from the list page, or wait for a new notification.',
} as const;

export function approvalsRoutes(deps: ApprovalsRouteDeps): Routes {
  const now = deps.now ?? Date.now;
  const base = new URL(deps.settings.publicBaseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const cookieOptions = { path: `${basePath}${APPROVALS_PATH}`, secure: base.protocol === 'https:' };
  const lessonDeps: LessonRouteDeps = {
    db: deps.db,
    keys: deps.keys,
    basePath,
    linkTtlMs: deps.settings.linkTtlMs,
    dryRunWindowMs: deps.learning?.dryRunWindowMs ?? 0,
    now,
  };

  /** The browser's session, or a new one with the header that sets it. */
  function session(req: IncomingMessage): { id: string; headers: Record<string, string> } {
    const existing = sessionOf(req);
    if (existing) return { id: existing, headers: {} };
    const id = newSession();
    return { id, headers: { 'set-cookie': sessionCookie(id, cookieOptions) } };
  }

  async function card(action: JournaledAction, keys: ApprovalKeys, sessionId: string, link?: SignedLink): Promise<ActionCard> {
    const signed = link ?? signLink(keys, action.id, now() + deps.settings.linkTtlMs);
    const path = `${basePath}${actionPath(action.id)}`;
    return {
      action,
      accountEmail: await accountEmail(deps.db, action.accountId),
      href: `${path}?exp=${signed.exp}&sig=${signed.sig}`,
      form: { action: path, exp: signed.exp, sig: signed.sig, csrf: csrfToken(keys.csrf, sessionId, signed) },
      decisions: openDecisions(action),
    };
  }

  /** The threads awaiting a reply, each with its due time in its account's zone and, while waiting, a Cancel form. */
  async function followUpCards(defaultZone: string, keys: ApprovalKeys, sessionId: string): Promise<FollowUpCard[]> {
    const actions = await listFollowUps(deps.db);
    const accounts = [...new Set(actions.map((a) => a.accountId))];
    const zones = new Map(await Promise.all(accounts.map(async (id) => [id, await accountTimeZone(deps.db, id, defaultZone)] as const)));
    return Promise.all(
      actions.map(async (action) => {
        const c = await card(action, keys, sessionId);
        const due = action.scheduledFor ? describeLocal(new Date(action.scheduledFor), zones.get(action.accountId)!) : '–';
        return { action, accountEmail: c.accountEmail, due, gmailHref: gmailThreadLink(c.accountEmail ?? '', action.threadId), form: c.form };
      }),
    );
  }

  const list = async (req: IncomingMessage, res: ServerResponse) => {
    const token = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
    if (!deps.settings.operatorToken) {
      refuse(res, 403, 'List page off', 'The list page needs APPROVALS_OPERATOR_TOKEN; the links in notifications open single actions.');
      return;
    }
    if (!operatorTokenMatches(deps.settings.operatorToken, token)) {
      refuse(res, 403, 'Not allowed', 'The token is missing or wrong.');
      return;
    }
    const keys = await deps.keys();
    const s = session(req);
    const [pending, recent] = await Promise.all([
      listActions(deps.db, { states: ['awaiting_approval'], ascending: true, limit: 500 }),
      listActions(deps.db, { limit: RECENT_ACTIONS }),
    ]);
    const cards = (actions: JournaledAction[]) => Promise.all(actions.map((a) => card(a, keys, s.id)));
    const followUps = deps.followUps ? followUpsSection(await followUpCards(deps.followUps.defaultZone, keys, s.id), deps.followUps.label) : undefined;
    let lessons: string | undefined;
    if (deps.learning) {
      // The page is where lessons are reviewed: what the latest corrections teach is proposed first (idempotent).
      if (deps.learning.enabled) await deps.learning.propose();
      lessons = lessonsSection(await lessonCards(lessonDeps, keys, s.id));
    }
    const sections = { ...(lessons !== undefined ? { lessons } : {}), ...(followUps !== undefined ? { followUps } : {}) };
    const sendersHref = `${SENDERS_PATH}?${new URLSearchParams({ token: token! }).toString()}`;
    sendHtml(res, 200, renderListPage({ pending: await cards(pending), recent: await cards(recent), ...sections, sendersHref }), s.headers);
  };

  /** The action a link names, or the refusal already sent. */
  async function linked(
    req: IncomingMessage,
    res: ServerResponse,
    fields: { exp: string | null; sig: string | null },
  ): Promise<{ keys: ApprovalKeys; link: SignedLink } | null> {
    const path = (req.url ?? '/').split('?')[0]!;
    const actionId = path.slice(ACTION_PREFIX.length);
    const keys = await deps.keys();
    const check = verifyLink(keys, { actionId, ...fields }, now());
    if (!check.ok) {
      refuse(res, 403, check.why === 'expired' ? 'Link expired' : 'Not allowed', LINK_REFUSALS[check.why]);
      return null;
    }
    return { keys, link: check.link };
  }

  const show = async (req: IncomingMessage, res: ServerResponse) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    const ok = await linked(req, res, { exp: query.get('exp'), sig: query.get('sig') });
    if (!ok) return;
    const action = await loadAction(deps.db, ok.link.actionId);
    if (!action) {
      refuse(res, 404, 'No such action', 'The action is gone from the journal.');
      return;
    }
    const s = session(req);
    sendHtml(res, 200, renderActionPage(await card(action, ok.keys, s.id, ok.link)), s.headers);
  };

  const decide = async (req: IncomingMessage, res: ServerResponse) => {
    if (!originAllowed(req, deps.settings.publicBaseUrl)) {
      refuse(res, 403, 'Not allowed', 'This form was posted from another site.');
      return;
    }
    if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '')) {
      refuse(res, 400, 'Bad request', 'Expected a form.');
      return;
    }
    let form: URLSearchParams;
    try {
      form = await readForm(req);
    } catch (err) {
      if (!(err instanceof FormTooLarge)) throw err;
      refuse(res, 413, 'Bad request', 'The form is too large.');
      return;
    }
    const ok = await linked(req, res, { exp: form.get('exp'), sig: form.get('sig') });
    if (!ok) return;
    const sessionId = sessionOf(req);
    if (!csrfTokenValid(ok.keys.csrf, sessionId, ok.link, form.get('csrf'))) {
      refuse(res, 403, 'Not allowed', 'The form has expired or did not come from this page: reload the page and try again.');
      return;
    }
    const decision = form.get('decision');
    const cancelling = decision === CANCEL_FOLLOW_UP && deps.followUps !== undefined;
    if (!cancelling && !DECISIONS.includes(decision as Decision)) {
      refuse(res, 400, 'Bad request', 'Unknown decision.');
      return;
    }
    const outcome = cancelling ? await deps.followUps!.cancel(ok.link.actionId) : await deps.decide(ok.link.actionId, decision as Decision, 'page');
    log.info(`${decision} ${ok.link.actionId} from the page: ${outcome.ok ? 'done' : 'not done'}`);
    const action = outcome.action ?? (await loadAction(deps.db, ok.link.actionId));
    if (!action) {
      refuse(res, 404, 'No such action', outcome.message);
      return;
    }
    const shown: Outcome = { ok: outcome.ok, message: outcome.message };
    sendHtml(res, outcome.ok ? 200 : 409, renderActionPage(await card(action, ok.keys, sessionId!, ok.link), shown));
  };

  /** The senders page: the operator's, like the list. */
  const senders = async (req: IncomingMessage, res: ServerResponse) => {
    const params = new URL(req.url ?? '/', 'http://x').searchParams;
    const token = params.get('token');
    if (!deps.settings.operatorToken || !operatorTokenMatches(deps.settings.operatorToken, token)) {
      refuse(res, 403, 'Not allowed', 'The senders page needs APPROVALS_OPERATOR_TOKEN, and the token is missing or wrong.');
      return;
    }
    const since = params.get('since') ?? '90d';
    const m = /^(\d{1,5})d$/.exec(since);
    const by = params.get('by') === 'domain' ? 'domain' : 'sender';
    const sortParam = params.get('sort') ?? 'messages';
    const sort = (SENDER_SORTS as readonly string[]).includes(sortParam) ? (sortParam as SenderSort) : 'messages';
    if (!m) {
      refuse(res, 400, 'Bad request', 'since: a number of days, like 90d.');
      return;
    }
    const accounts = await deps.db.query<{ id: string; email: string }>(`SELECT id, email FROM accounts ORDER BY email`, []);
    const wanted = params.get('account');
    const account = accounts.find((a) => a.email === wanted || a.id === wanted);
    const query = { by, sort, ...(params.get('filter') === 'never-opened' ? { filter: 'never-opened' as const } : {}), limit: 500 } as const;
    const started = performance.now();
    const rows = account ? await listSenders(deps.db, { ...query, accountId: account.id, since: new Date(now() - Number(m[1]) * 86_400_000) }) : [];
    sendHtml(res, 200, renderSendersPage({ token: token!, accounts, ...(account ? { account } : {}), query: { ...query, since }, rows, tookMs: Math.round(performance.now() - started) }));
  };

  return {
    [`GET ${APPROVALS_PATH}`]: list,
    [`GET ${SENDERS_PATH}`]: senders,
    [`GET ${ACTION_PREFIX}*`]: show,
    [`POST ${ACTION_PREFIX}*`]: decide,
    ...(deps.learning
      ? lessonRoutes(lessonDeps, {
          send: sendHtml,
          session,
          publicBaseUrl: deps.settings.publicBaseUrl,
          async readForm(req, res) {
            try {
              return await readForm(req);
            } catch (err) {
              if (!(err instanceof FormTooLarge)) throw err;
              refuse(res, 413, 'Bad request', 'The form is too large.');
              return null;
            }
          },
        })
      : {}),
  };
}
