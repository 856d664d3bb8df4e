// Workflow code: how a run's facts are put before the model (as data) and what goes under its
// report (every listed thread with its link, whatever the model wrote).
import type { ProposedThreadAction } from './activity-contracts.js';
import type { ScheduleFacts } from './contracts.js';

export function gmailThreadLink(email: string, threadId: string): string {
  return `https://mail.google.com/mail/?authuser=${encodeURIComponent(email)}#all/${encodeURIComponent(threadId)}`;
}

/** The facts as the model's first message shows them: data inside <facts>, never instructions. */
export function factsText(facts: ScheduleFacts): string {
  const lines = [`<facts kind="${facts.kind}" since="${facts.since}">`];
  for (const s of facts.sections) {
    lines.push(`## ${s.title} (${s.items.length})${s.note ? ` — ${s.note}` : ''}`);
    for (const i of s.items) lines.push(`- ${oneLine(i.subject) || '(no subject)'} | from ${oneLine(i.from)} | ${i.detail} | ${i.link}`);
  }
  const done = Object.entries(facts.done).map(([k, n]) => `${k.replace(/_/g, ' ')}: ${n}`);
  lines.push(`## Done since ${facts.since}`, done.length > 0 ? done.join(', ') : 'nothing');
  lines.push('</facts>');
  return lines.join('\n');
}

/** Under the model's text in the delivered report: every listed thread with its link (the model may drop links). */
export function linksAppendix(facts: ScheduleFacts): string {
  const lines: string[] = [];
  for (const s of facts.sections) {
    if (s.items.length === 0) continue;
    lines.push(`${s.title}:`);
    for (const i of s.items) lines.push(`  - ${oneLine(i.subject) || '(no subject)'} (${oneLine(i.from)}; ${i.detail})\n    ${i.link}`);
  }
  return lines.join('\n');
}

/** Under the report: each action the run proposed, what became of it, and its thread's link. */
export function proposedAppendix(proposed: ProposedThreadAction[], email: string, describe: (p: ProposedThreadAction) => string): string {
  if (proposed.length === 0) return '';
  const lines = ['Actions proposed:'];
  for (const p of proposed) lines.push(`  - ${describe(p)}: "${oneLine(p.subject) || '(no subject)'}"\n    ${gmailThreadLink(email, p.threadId)}`);
  return lines.join('\n');
}

/** Mail text in a one-line field: no line breaks, no markup that closes the facts block. */
function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(/</g, '‹').replace(/>/g, '›').slice(0, 200).trim();
}

