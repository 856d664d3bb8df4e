// `npm run cli -- agents ...`: the agent profiles routing rules hand threads to (docs/agent.md).
//   list                                              the profiles
//   show <name>                                       one profile in full
//   set <name> --instructions TEXT [--tools T,T...] [--max-steps N] [--model M] [--sends-need-approval yes|no] [--description TEXT]
//   remove <name>
// Route mail to a profile with `rules add ... --category C --route <name>`.
import { z } from 'zod';
import type { Env } from '../config/env.js';
import type { PrismaClient } from '../db/client.js';
import { AGENT_TOOLS, type AgentProfile, type AgentToolName } from '../agent/contracts.js';
import { listAgentProfiles, loadAgentProfile, saveAgentProfile } from '../agent/profiles.js';
import { prismaExecutor } from '../db/sql-executor.js';
import { parseSubcommand, UsageError, withDatabase, type CliIo } from './command.js';
import { printTable } from './table.js';

export const USAGE = `usage: npm run cli -- agents list
       npm run cli -- agents show <name>
       npm run cli -- agents set <name> --instructions TEXT [--tools ${AGENT_TOOLS.slice(0, 3).join(',')},...] [--max-steps N]
                                 [--model M] [--sends-need-approval yes|no] [--description TEXT]
       npm run cli -- agents remove <name>
tools: ${AGENT_TOOLS.join(', ')}
route mail to a profile: npm run cli -- rules add --scope ... --category C --route <name>`;

const OPTIONS = {
  instructions: { type: 'string' },
  tools: { type: 'string' },
  'max-steps': { type: 'string' },
  model: { type: 'string' },
  'sends-need-approval': { type: 'string' },
  description: { type: 'string' },
} as const;

const setArgs = z.object({
  name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'expected a name of lower-case letters, digits, - and _'),
  instructions: z.string().trim().min(10, 'expected the instructions (at least a sentence)').max(8000),
  tools: z
    .string()
    .transform((t) => t.split(',').map((x) => x.trim()).filter(Boolean))
    .pipe(z.array(z.enum(AGENT_TOOLS, { error: `expected tools among ${AGENT_TOOLS.join(', ')}` })).min(1, 'expected at least one tool'))
    .optional(),
  'max-steps': z.string().regex(/^\d+$/, 'expected a whole number').transform(Number).refine((n) => n >= 1 && n <= 50, 'expected 1 to 50').optional(),
  model: z.string().trim().min(1).optional(),
  'sends-need-approval': z.enum(['yes', 'no'], { error: 'expected yes or no' }).optional(),
  description: z.string().trim().max(500).optional(),
});

async function set(prisma: PrismaClient, io: CliIo, name: string | undefined, values: Record<string, unknown>): Promise<void> {
  const existing = name ? await loadAgentProfile(prismaExecutor(prisma), name) : null;
  const parsed = setArgs.safeParse({ ...values, name, instructions: values.instructions ?? existing?.instructions });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UsageError(`${issue.path[0] === 'name' ? 'name' : `--${String(issue.path[0])}`}: ${issue.message}`);
  }
  const a = parsed.data;
  const profile: AgentProfile = {
    name: a.name,
    description: a.description ?? existing?.description ?? '',
    instructions: a.instructions,
    tools: (a.tools as AgentToolName[] | undefined) ?? existing?.tools ?? ['read_thread', 'write_draft', 'escalate'],
    maxSteps: a['max-steps'] ?? existing?.maxSteps ?? 8,
    ...((a.model ?? existing?.model) ? { model: a.model ?? existing?.model } : {}),
    sendsNeedApproval: a['sends-need-approval'] ? a['sends-need-approval'] === 'yes' : (existing?.sendsNeedApproval ?? true),
  };
  await saveAgentProfile(prismaExecutor(prisma), profile);
  io.out(`${existing ? 'updated' : 'created'} agent ${profile.name}: ${profile.tools.join(', ')}; at most ${profile.maxSteps} steps; sends ${profile.sendsNeedApproval ? 'wait for your approval' : 'as the policy allows'}`);
}

/** Entry for src/cli/main.ts. Returns the exit code. */
export async function runAgentsCli(cfg: Env, argv: string[], io: CliIo = { out: (l) => console.log(l) }): Promise<number> {
  const parsed = parseSubcommand(io, { name: 'agents', usage: USAGE, subcommands: ['list', 'show', 'set', 'remove'], options: OPTIONS }, argv);
  if (typeof parsed === 'number') return parsed;
  const { sub } = parsed;
  const name = parsed.positionals[0];
  return withDatabase(cfg, io, { name: 'agents', usage: USAGE }, async (prisma) => {
    const db = prismaExecutor(prisma);
    if (sub === 'list') {
      const profiles = await listAgentProfiles(db);
      if (profiles.length === 0) return io.out('No agent profiles.');
      printTable(io.out, ['NAME', 'TOOLS', 'STEPS', 'SENDS', 'DESCRIPTION'], profiles.map((p) => [
        p.name, p.tools.join(','), String(p.maxSteps), p.sendsNeedApproval ? 'approval' : 'policy', p.description,
      ]));
      return;
    }
    if (!name) throw new UsageError(`${sub} needs a profile name (see npm run cli -- agents list)`);
    if (sub === 'set') return set(prisma, io, name, parsed.values);
    const profile = await loadAgentProfile(db, name);
    if (!profile) throw new UsageError(`no agent profile ${name}`);
    if (sub === 'remove') {
      const routed = await prisma.rule.count({ where: { route: name } });
      if (routed > 0) throw new UsageError(`${routed} rule(s) route to ${name}: remove or change them first (npm run cli -- rules list)`);
      await prisma.agentProfile.delete({ where: { name } });
      return io.out(`removed agent ${name}`);
    }
    io.out(`agent ${profile.name}${profile.description ? `: ${profile.description}` : ''}`);
    io.out(`tools      ${profile.tools.join(', ')}`);
    io.out(`steps      at most ${profile.maxSteps}`);
    io.out(`model      ${profile.model ?? `${cfg.ANTHROPIC_MODEL} (the configured one)`}`);
    io.out(`sends      ${profile.sendsNeedApproval ? 'wait for your approval' : 'as the safety policy allows'}`);
    io.out(`instructions\n  ${profile.instructions.split('\n').join('\n  ')}`);
  });
}
