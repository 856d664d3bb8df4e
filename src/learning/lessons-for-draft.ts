// The accepted writing lessons a draft is written with (docs/learning.md): the account's (and the
// hand-written ones for every account) that apply to the sender — its own, its domain's (parent
// domains included), the account's, the global ones — most specific first, as many as fit the token
// bound. Only `accepted` lessons: a proposed, rejected or reverted one never reaches the prompt. A
// typed lesson (sign-off, greeting, language, tone) goes in as our sentence for its checked value,
// rendered here, never as stored text; a free-text lesson as the text the user accepted.
import type { SqlExecutor } from '../db/sql-executor.js';
import { estimateTokens } from '../llm/prompts.js';
import { readTypedLesson, renderTypedLesson, WRITING_KINDS } from './contracts.js';

export interface LessonInPrompt {
  id: string;
  version: number;
  text: string;
}

/** id@version, as the decision log records it. */
export const lessonRef = (l: Pick<LessonInPrompt, 'id' | 'version'>) => `${l.id}@${l.version}`;

const SPECIFICITY = { sender: 0, domain: 1, account: 2, global: 3 } as const;

export async function lessonsForDraft(db: SqlExecutor, input: { accountId: string; sender: string; maxTokens: number }): Promise<LessonInPrompt[]> {
  if (input.maxTokens <= 0) return [];
  const sender = input.sender.toLowerCase();
  const domain = sender.split('@')[1] ?? '';
  const rows = await db.query<{ id: string; version: number; text: string; typed: unknown; scope: keyof typeof SPECIFICITY; scope_ref: string | null; updated_at: Date }>(
    `SELECT l.id, l.version, v.text, v.typed, l.scope::text AS scope, l.scope_ref, l.updated_at
     FROM lessons l JOIN lesson_versions v ON v.lesson_id = l.id AND v.version = l.version
     WHERE l.state = 'accepted' AND l.kind = ANY($2::text[]) AND (l.account_id = $1 OR l.account_id IS NULL)
       AND (l.scope IN ('global', 'account')
         OR (l.scope = 'sender' AND lower(l.scope_ref) = $3)
         OR (l.scope = 'domain' AND $4 <> '' AND ($4 = lower(l.scope_ref) OR $4 LIKE '%.' || lower(l.scope_ref))))`,
    [input.accountId, WRITING_KINDS, sender, domain],
  );
  rows.sort((a, b) => SPECIFICITY[a.scope] - SPECIFICITY[b.scope] || b.updated_at.getTime() - a.updated_at.getTime() || a.id.localeCompare(b.id));
  const out: LessonInPrompt[] = [];
  let left = input.maxTokens;
  for (const r of rows) {
    const typed = readTypedLesson(r.typed);
    const text = typed ? renderTypedLesson(typed) : r.text;
    const cost = estimateTokens(`- ${text}\n`);
    if (cost > left) continue; // a shorter, less specific one may still fit
    left -= cost;
    out.push({ id: r.id, version: r.version, text });
  }
  return out;
}
