// The approvals page's lessons (docs/learning.md): each proposal with its evidence and its dry run,
// and Accept / Reject buttons. Server-rendered, no script; every value goes through escapeHtml.
import type { Lesson } from '../learning/contracts.js';
import { formText, scopeText } from '../learning/describe.js';
import { describeOutcome, type DryRunResult } from '../learning/dry-run.js';
import { formatActionList } from '../actions/action-specs.js';
import { decisionForm, escapeHtml, type DecisionForm } from './approvals-page.js';

export type LessonDecision = 'accept' | 'reject';

export interface LessonCard {
  lesson: Lesson;
  /** Its own page: a signed link (path and query). */
  href: string;
  form: DecisionForm;
  dryRun: DryRunResult | null;
  dryRunDays: number;
  decisions: LessonDecision[];
}

const LABELS: Record<LessonDecision, string> = { accept: 'Accept', reject: 'Reject' };

export function lessonDecisions(lesson: Lesson): LessonDecision[] {
  if (lesson.state === 'proposed') return ['accept', 'reject'];
  return lesson.state === 'reverted' ? ['accept'] : [];
}

function buttons(card: LessonCard): string {
  return decisionForm(card.form, card.decisions.map((d) => ({ value: d, label: LABELS[d] })));
}

function evidenceList(lesson: Lesson): string {
  const items = lesson.current.evidence.map(
    (e) =>
      `<li>${escapeHtml(e.at.slice(0, 16).replace('T', ' '))}: ${escapeHtml(e.source)} ${escapeHtml(e.kind)}${e.argument ? ` <code>${escapeHtml(e.argument)}</code>` : ''} ` +
      `on <a href="${escapeHtml(e.link)}" rel="noreferrer">${escapeHtml(e.subject || e.threadId)}</a> from ${escapeHtml(e.sender)}</li>`,
  );
  return items.length ? `<ul class="evidence">${items.join('')}</ul>` : '–';
}

function dryRunBlock(card: LessonCard): string {
  const r = card.dryRun;
  if (!r) return '';
  const examples = r.examples.map(
    (ex) => `<li>${escapeHtml(ex.subject || ex.threadId)} <small>from ${escapeHtml(ex.sender)}</small><br>was ${escapeHtml(describeOutcome(ex.before))}<br>now ${escapeHtml(describeOutcome(ex.after))}</li>`,
  );
  return `<div class="dry-run"><strong>On your mail of the last ${card.dryRunDays} days</strong> (${r.threads} threads): ` +
    `<span class="recategorised">${r.recategorised}</span> categorised differently, <span class="acted">${r.actedOnDifferently}</span> acted on differently` +
    `${r.fromJournal ? ` <small>(${r.fromJournal} judged by sender and subject only)</small>` : ''}${examples.length ? `<ul>${examples.join('')}</ul>` : ''}</div>`;
}

function lessonBody(card: LessonCard): string {
  const { lesson } = card;
  const form = formText(lesson);
  const rule = lesson.current.rule
    ? `<br><small>rule: category ${escapeHtml(lesson.current.rule.category)}, then ${escapeHtml(formatActionList(lesson.current.rule.actions))}</small>`
    : form
      ? `<br><small class="form">${escapeHtml(form)}</small>`
      : '';
  return `<p class="says">${escapeHtml(lesson.current.text)}${rule}</p>
<p><small>${escapeHtml(lesson.kind)} · ${escapeHtml(scopeText(lesson))} · version ${lesson.version} · <span class="state">${escapeHtml(lesson.state)}</span></small></p>
${evidenceList(lesson)}
${dryRunBlock(card)}
<p>${buttons(card)}</p>`;
}

/** The list page's section: every proposal waiting for the user. */
export function lessonsSection(cards: LessonCard[]): string {
  const items = cards.map((c) => `<article class="lesson" data-lesson-id="${escapeHtml(c.lesson.id)}"><h3><a href="${escapeHtml(c.href)}">Lesson</a></h3>${lessonBody(c)}</article>`);
  return `<h2>Lessons waiting for you (${cards.length})</h2>\n${items.length ? items.join('\n') : '<p>No lessons wait for you.</p>'}`;
}

export function lessonPageBody(card: LessonCard, outcome?: { ok: boolean; message: string }): string {
  const banner = outcome ? `<p class="outcome ${outcome.ok ? 'ok' : 'failed'}" id="outcome" role="status">${escapeHtml(outcome.message)}</p>` : '';
  return `<h1>Lesson</h1>\n${banner}\n${lessonBody(card)}`;
}
