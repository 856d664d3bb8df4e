// `npm run bench -- rules [--runs 20]`: what the rules cost on hostile mail. A crafted 300 kB From,
// Subject and body against the built-in rules and user rules with the heaviest patterns the save-time
// check lets through (quadratic on a header); for comparison, such a pattern on 30 kB of the header
// unbounded (the whole 300 kB would take minutes); and how long the check takes to refuse a
// catastrophic pattern when a rule is saved.
import { parseArgs } from 'node:util';
import { BUILTIN_RULES, evaluateRules, validateRule, InvalidRuleError } from '../../src/rules/rules.js';
import type { Rule, RuleEmail } from '../../src/rules/contracts.js';

const ms = (since: number) => performance.now() - since;

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { runs: { type: 'string', default: '20' } } });
  const runs = Number(values.runs);
  const hostile: RuleEmail = {
    from: ` noreply${' '.repeat(299_992)}`,
    sender: ` noreply${' '.repeat(299_992)}`,
    to: 'me@example.com',
    subject: 'invoice'.repeat(42_858),
    date: 'Mon, 3 Mar 2025 10:00:00 +0000',
    body: ' '.repeat(300_000),
    headers: { precedence: ' '.repeat(300_000), 'auto-submitted': ' '.repeat(300_000) },
  };
  const user = (id: string, conditions: Rule['conditions']): Rule => ({ id, scope: 'global', kind: 'deterministic', category: 'fyi', priority: 0, enabled: true, conditions });
  const rules = [...BUILTIN_RULES, user('u1', { subject: '/invoice.*paid/' }), user('u2', { from: '/\\s*x\\s*$/' }), user('u3', { body: 'needle' })];
  evaluateRules(rules, hostile); // compiles, and checks the user patterns once

  let started = performance.now();
  for (let i = 0; i < runs; i++) evaluateRules(rules, hostile);
  console.log(`rules: hostile 300 kB mail, built-in and user rules: ${(ms(started) / runs).toFixed(2)} ms per email`);

  const quadratic = /\s*x\s*$/i;
  started = performance.now();
  quadratic.test(hostile.from.slice(0, 30_000));
  console.log(`rules: /\\s*x\\s*$/ on 30 kB of that From header, unbounded: ${ms(started).toFixed(0)} ms`);

  started = performance.now();
  try {
    validateRule(user('bad', { subject: '/^(\\w+\\s?)*$/' }));
    console.log('rules: /^(\\w+\\s?)*$/ was accepted (unexpected)');
  } catch (err) {
    if (!(err instanceof InvalidRuleError)) throw err;
    console.log(`rules: /^(\\w+\\s?)*$/ refused at save in ${ms(started).toFixed(0)} ms`);
  }
}
