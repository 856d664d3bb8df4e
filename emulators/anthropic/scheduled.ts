// Stand-ins for the scheduled runs' profiles (`brief`, `digest`; docs/anthropic-emulator.md): when the
// prompt carries the run's <facts kind="brief|digest"> block, the "model" writes the report from it,
// deterministically, so tests and benches can assert what arrives. A real model writes better prose;
// these only restate the facts in the shape the profiles' instructions ask for.

const FACTS = /<facts kind="(brief|digest)"[^>]*>\n([\s\S]*?)\n<\/facts>/;

interface Section {
  title: string;
  note?: string;
  items: { subject: string; from: string; detail: string }[];
}

function sectionsOf(body: string): { sections: Section[]; done: string } {
  const sections: Section[] = [];
  let done = '';
  let inDone = false;
  for (const line of body.split('\n')) {
    const head = /^## (.+?)(?: \((\d+)\))?(?: — (.*))?$/.exec(line);
    if (head) {
      inDone = head[1]!.startsWith('Done since');
      if (!inDone) sections.push({ title: head[1]!, items: [], ...(head[3] ? { note: head[3] } : {}) });
      continue;
    }
    if (inDone) {
      done = line.trim();
      continue;
    }
    const item = /^- (.*?) \| from (.*?) \| (.*?) \| \S+$/.exec(line);
    if (item && sections.length > 0) sections.at(-1)!.items.push({ subject: item[1]!, from: item[2]!, detail: item[3]! });
  }
  return { sections, done };
}

const firstSentence = (text: string) => (/^(.{1,160}?[.!?])(\s|$)/.exec(text.trim())?.[1] ?? text.trim().slice(0, 160));

/** The report for a scheduled run's prompt, or undefined when the prompt is not one. */
export function scheduledReport(promptText: string): string | undefined {
  const found = FACTS.exec(promptText);
  if (!found) return undefined;
  const { sections, done } = sectionsOf(found[2]!);
  if (found[1] === 'digest') {
    const items = sections.flatMap((s) => s.items);
    if (items.length === 0) return 'No newsletters were archived since the last digest.';
    return [
      `Newsletters since the last digest (${items.length}):`,
      ...items.map((i) => {
        const snippet = i.detail.replace(/^archived \d{4}-\d\d-\d\d \d\d:\d\d UTC:\s*/, '');
        return `- ${i.subject} (${i.from}): ${snippet === i.detail ? 'no preview' : firstSentence(snippet)}`;
      }),
    ].join('\n');
  }
  const needs = sections.reduce((n, s) => n + s.items.length, 0);
  const lines = [`Good morning. ${needs === 0 ? 'Nothing needs you today.' : `${needs} thing${needs === 1 ? '' : 's'} need${needs === 1 ? 's' : ''} you today.`}`];
  for (const s of sections) {
    if (s.items.length === 0) {
      if (s.note) lines.push('', `${s.title}: ${s.note}.`);
      continue;
    }
    lines.push('', `${s.title} (${s.items.length}):`, ...s.items.map((i) => `- ${i.subject} — ${i.from} (${i.detail})`));
  }
  lines.push('', `Since the last brief: ${done || 'nothing'}.`);
  return lines.join('\n');
}
