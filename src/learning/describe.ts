// How a lesson and a dry run read as text: one wording for the CLI and the approvals page (which
// escapes it for HTML). Lines hold mail senders and subjects: callers make them display-safe.
import { WRITING_KINDS, type Lesson } from './contracts.js';
import { describeOutcome, type DryRunResult } from './dry-run.js';

export function scopeText(lesson: Pick<Lesson, 'scope' | 'scopeRef'>): string {
  return lesson.scopeRef ? `${lesson.scope} ${lesson.scopeRef}` : lesson.scope;
}

/**
 * Whether a writing lesson is typed data (it may take hold alone; our sentence goes into the prompt)
 * or free text (the proposer's words: it takes hold only when the user accepts it); undefined for a
 * triage lesson.
 */
export function formText(lesson: Pick<Lesson, 'kind' | 'current'>): string | undefined {
  if (!WRITING_KINDS.includes(lesson.kind)) return undefined;
  const typed = lesson.current.typed;
  if (!typed) return "free text (the proposer's words): takes hold only when you accept it";
  const { type, ...value } = typed;
  return `typed ${type} ${JSON.stringify(Object.values(value)[0])} (our sentence for it goes into the prompt; may take hold alone: memory auto-accept)`;
}

/** The dry run's summary and examples, a line each. */
export function dryRunLines(result: DryRunResult, windowDays: number): string[] {
  const lines = [
    `on the ${result.threads} thread(s) of the last ${windowDays} days: ${result.recategorised} categorised differently, ${result.actedOnDifferently} acted on differently` +
      (result.fromJournal > 0 ? ` (${result.fromJournal} judged by sender and subject only: no stored message)` : ''),
  ];
  for (const ex of result.examples) {
    lines.push(`  ${ex.threadId}  ${ex.sender}  ${JSON.stringify(ex.subject)}`);
    lines.push(`    was ${describeOutcome(ex.before)}`);
    lines.push(`    now ${describeOutcome(ex.after)}`);
  }
  return lines;
}
