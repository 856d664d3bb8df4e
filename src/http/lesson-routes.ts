// The lessons on the approvals page (docs/learning.md):
//   GET  /approvals?token=…                 (approvals-routes.ts) lists the proposals, via lessonCards
//   GET  /approvals/l/<id>?exp=…&sig=…       one lesson, from a signed link
//   POST /approvals/l/<id>                   accept / reject it
// Protected as the action decisions are: a signed link (its own purpose), a CSRF token bound to the
// link and the browser's session cookie, and an Origin (when sent) that is ours.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { signLessonLink, verifyLessonLink, type ApprovalKeys, type SignedLink } from '../actions/approval-links.js';
import { wholeDays } from '../config/settings.js';
import type { SqlExecutor } from '../db/sql-executor.js';
import { previewLesson } from '../learning/lesson-preview.js';
import { acceptLesson, LessonChangeError, listLessons, loadLesson, rejectLesson } from '../learning/memory.js';
import type { Lesson } from '../learning/contracts.js';
import { createLogger } from '../shared/log.js';
import { csrfToken, csrfTokenValid, originAllowed, sessionOf } from './approvals-csrf.js';
import { layout, renderMessagePage } from './approvals-page.js';
import { lessonDecisions, lessonPageBody, type LessonCard, type LessonDecision } from './lessons-page.js';

const log = createLogger('approvals');

export const LESSON_PREFIX = '/approvals/l/';

export interface LessonRouteDeps {
  db: SqlExecutor;
  keys(): Promise<ApprovalKeys>;
  basePath: string;
  linkTtlMs: number;
  dryRunWindowMs: number;
  now: () => number;
}

/** The CSRF token's subject: the lesson, never mistaken for an action of the same id. */
const csrfSubject = (link: SignedLink) => ({ actionId: `lesson:${link.actionId}`, exp: link.exp });

export async function lessonCard(deps: LessonRouteDeps, lesson: Lesson, keys: ApprovalKeys, sessionId: string, link?: SignedLink): Promise<LessonCard> {
  const signed = link ?? signLessonLink(keys, lesson.id, deps.now() + deps.linkTtlMs);
  const path = `${deps.basePath}${LESSON_PREFIX}${lesson.id}`;
  return {
    lesson,
    href: `${path}?exp=${signed.exp}&sig=${signed.sig}`,
    form: { action: path, exp: signed.exp, sig: signed.sig, csrf: csrfToken(keys.csrf, sessionId, csrfSubject(signed)) },
    dryRun: await previewLesson(deps.db, lesson, deps.dryRunWindowMs, new Date(deps.now())),
    dryRunDays: wholeDays(deps.dryRunWindowMs),
    decisions: lessonDecisions(lesson),
  };
}

/** Every proposal waiting for the user, oldest first, as the list page shows them. */
export async function lessonCards(deps: LessonRouteDeps, keys: ApprovalKeys, sessionId: string): Promise<LessonCard[]> {
  const proposed = (await listLessons(deps.db, { state: 'proposed' })).reverse();
  return Promise.all(proposed.map((l) => lessonCard(deps, l, keys, sessionId)));
}

export interface LessonPageIo {
  send(res: ServerResponse, status: number, html: string, headers?: Record<string, string>): void;
  session(req: IncomingMessage): { id: string; headers: Record<string, string> };
  readForm(req: IncomingMessage, res: ServerResponse): Promise<URLSearchParams | null>;
  publicBaseUrl: string;
}

const REFUSALS = {
  malformed: 'This link is incomplete or damaged.',
  'bad signature': 'This link is not valid.',
  expired: 'This link has expired. Open the lesson from the list page.',
} as const;

export function lessonRoutes(deps: LessonRouteDeps, io: LessonPageIo) {
  const refuse = (res: ServerResponse, status: number, title: string, message: string) => io.send(res, status, renderMessagePage(title, message));

  async function linked(req: IncomingMessage, res: ServerResponse, fields: { exp: string | null; sig: string | null }) {
    const lessonId = (req.url ?? '/').split('?')[0]!.slice(`${LESSON_PREFIX}`.length);
    const keys = await deps.keys();
    const check = verifyLessonLink(keys, { lessonId, ...fields }, deps.now());
    if (!check.ok) {
      refuse(res, 403, check.why === 'expired' ? 'Link expired' : 'Not allowed', REFUSALS[check.why]);
      return null;
    }
    const lesson = await loadLesson(deps.db, lessonId);
    if (!lesson) {
      refuse(res, 404, 'No such lesson', 'The lesson is gone from the memory.');
      return null;
    }
    return { keys, link: check.link, lesson };
  }

  const show = async (req: IncomingMessage, res: ServerResponse) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams;
    const ok = await linked(req, res, { exp: query.get('exp'), sig: query.get('sig') });
    if (!ok) return;
    const s = io.session(req);
    io.send(res, 200, layout('Lesson', lessonPageBody(await lessonCard(deps, ok.lesson, ok.keys, s.id, ok.link))), s.headers);
  };

  const decide = async (req: IncomingMessage, res: ServerResponse) => {
    if (!originAllowed(req, io.publicBaseUrl)) return refuse(res, 403, 'Not allowed', 'This form was posted from another site.');
    if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '')) return refuse(res, 400, 'Bad request', 'Expected a form.');
    const form = await io.readForm(req, res);
    if (!form) return;
    const ok = await linked(req, res, { exp: form.get('exp'), sig: form.get('sig') });
    if (!ok) return;
    const sessionId = sessionOf(req);
    if (!csrfTokenValid(ok.keys.csrf, sessionId, csrfSubject(ok.link), form.get('csrf'))) {
      return refuse(res, 403, 'Not allowed', 'The form has expired or did not come from this page: reload the page and try again.');
    }
    const decision = form.get('decision') as LessonDecision | null;
    if (decision !== 'accept' && decision !== 'reject') return refuse(res, 400, 'Bad request', 'Unknown decision.');
    let outcome: { ok: boolean; message: string };
    try {
      const { lesson, moved } = decision === 'accept' ? await acceptLesson(deps.db, ok.lesson.id, 'page') : await rejectLesson(deps.db, ok.lesson.id, 'page');
      outcome = { ok: true, message: moved ? `Lesson ${lesson.state}.` : `The lesson was ${lesson.state} already.` };
    } catch (err) {
      if (!(err instanceof LessonChangeError)) throw err;
      outcome = { ok: false, message: err.message };
    }
    log.info(`${decision} lesson ${ok.lesson.id} from the page: ${outcome.ok ? 'done' : 'not done'}`);
    const lesson = (await loadLesson(deps.db, ok.lesson.id))!;
    io.send(res, outcome.ok ? 200 : 409, layout('Lesson', lessonPageBody(await lessonCard(deps, lesson, ok.keys, sessionId!, ok.link), outcome)));
  };

  return {
    [`GET ${LESSON_PREFIX}*`]: show,
    [`POST ${LESSON_PREFIX}*`]: decide,
  };
}
