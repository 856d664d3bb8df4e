// Whether a rule's regular expression can hold a worker: V8's engine backtracks, and a pattern like
// /(a+)+$/ or /(a|a)*b/ takes exponential time on a crafted header. recheck (a ReDoS checker:
// automata analysis, seeded fuzzing where that cannot decide) tells how the matching time grows;
// with the input bounded (rules see at most RULE_HEADER_CHARS of a header, RULE_BODY_CHARS of the
// body), a pattern is accepted when its worst case stays small on that input.
import { check, checkSync, type Diagnostics } from 'recheck';
import type { Rule } from './contracts.js';

/** What a pattern is matched against: a header (From, To, Subject, any header) or the body. */
export type PatternInput = 'header' | 'body';

// The check runs once per pattern per process (cached); deterministic (recheck's seed is fixed), and
// bounded in time: a pattern it cannot judge within this long is refused, not run.
const CHECK_TIMEOUT_MS = 10_000;
const verdicts = new Map<string, Diagnostics>();

const PARAMS = { timeout: CHECK_TIMEOUT_MS, randomSeed: 0 };
const keyOf = (source: string, flags: string) => `${flags}/${source}`;

/** The pattern between slashes and its flags (`/^re:/m`), or null for a substring pattern. */
export function regexLiteral(pattern: string): { source: string; flags: string } | null {
  const literal = /^\/(.+)\/([a-z]*)$/s.exec(pattern);
  return literal ? { source: literal[1] ?? '', flags: literal[2] ?? '' } : null;
}

function diagnose(source: string, flags: string): Diagnostics {
  const key = keyOf(source, flags);
  let verdict = verdicts.get(key);
  if (!verdict) {
    verdict = checkSync(source, flags, PARAMS);
    verdicts.set(key, verdict);
  }
  return verdict;
}

/**
 * Checks the rules' regular expressions off the event loop (recheck's agent process or worker
 * thread), so that the synchronous check when a rule is compiled finds its verdict cached: a worker
 * reading a thread is not held while a dozen patterns are analysed. The built-in rules are not checked.
 */
export async function precheckRules(rules: readonly Rule[]): Promise<void> {
  const pending = new Map<string, { source: string; flags: string }>();
  for (const rule of rules) {
    if (rule.id.startsWith('builtin:')) continue;
    const c = rule.conditions ?? {};
    const patterns = [c.from, c.to, c.subject, c.body, ...(Array.isArray(c.header) ? c.header.map((h) => h?.pattern) : [])];
    for (const pattern of patterns) {
      const literal = typeof pattern === 'string' ? regexLiteral(pattern) : null;
      if (!literal) continue;
      let regex: RegExp;
      try {
        regex = new RegExp(literal.source, literal.flags.includes('i') ? literal.flags : `${literal.flags}i`);
      } catch {
        continue; // invalid: compiling the rule says why
      }
      if (!verdicts.has(keyOf(regex.source, regex.flags))) pending.set(keyOf(regex.source, regex.flags), { source: regex.source, flags: regex.flags });
    }
  }
  await Promise.all(
    [...pending].map(async ([key, { source, flags }]) => verdicts.set(key, await check(source, flags, PARAMS))),
  );
}

/**
 * Why the regex may not run on `input`, or null when it may. Refused: exponential growth anywhere;
 * polynomial growth on the body, or of degree 3 or more on a header (quadratic on a 2 kB header is a
 * few million steps, on a 20 kB body hundreds of millions), or of any degree when only fuzzing found
 * it (backreferences); and a pattern recheck could not judge.
 */
export function unsafePatternReason(source: string, flags: string, input: PatternInput): string | null {
  const verdict = diagnose(source, flags);
  switch (verdict.status) {
    case 'safe':
      return null;
    case 'unknown':
      return `could not be shown free of catastrophic backtracking (${'message' in verdict.error ? verdict.error.message : verdict.error.kind})`;
    case 'vulnerable': {
      const { complexity, attack } = verdict;
      // A degree found by fuzzing is a lower bound (a busy machine finds less): only the automaton's is trusted.
      if (complexity.type === 'polynomial' && complexity.degree <= 2 && !complexity.isFuzz && input === 'header') return null;
      const growth = complexity.type === 'exponential' ? 'exponentially' : `as the ${complexity.degree === 2 ? 'square' : `power ${complexity.degree}`} of the input`;
      return `catastrophic backtracking: its matching time grows ${growth} (for example on ${attack.pattern}); rewrite it without nested or overlapping repetition, or use a plain substring`;
    }
  }
}
