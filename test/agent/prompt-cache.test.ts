// Prompt caching in the agent loop (issue 35): every turn resends the tools and the system prompt; with
// a prefix above the model's minimum cacheable length (1,024 tokens on claude-sonnet-4-6) the first turn
// writes the cache and the later turns read it (platform.claude.com/docs/en/build-with-claude/prompt-caching).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProfile } from '../../src/agent/contracts.js';
import { saveAgentProfile } from '../../src/agent/profiles.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { deliverAndIngest, startInboxHarness, type InboxHarness } from '../helpers/inbox-harness.js';

let h: InboxHarness;

beforeAll(async () => {
  h = await startInboxHarness();
  await h.startWorkers();
});

afterAll(async () => {
  await h?.close();
});

describe('the agent loop with prompt caching', () => {
  it('writes the stable prefix on the first turn and reads it on the next ones', async () => {
    const name = 'cached-agent';
    const marker = h.anthropic.script(name, [
      { toolCalls: [{ name: 'read_thread', input: {} }] },
      { toolCalls: [{ name: 'write_draft', input: { body: 'Tuesday works for me.' } }] },
      { text: 'Drafted the reply.' },
    ]);
    // Long standing instructions, as a user's real ones can be: the prefix passes 1,024 tokens.
    const instructions = `Answer scheduling questions. ${marker}\n` + 'Always propose two time slots and keep replies under five sentences. '.repeat(80);
    const profile: AgentProfile = { name, description: 'cached', instructions, tools: ['read_thread', 'write_draft'], maxSteps: 5, sendsNeedApproval: true };
    await saveAgentProfile(prismaExecutor(h.prisma), profile);
    await h.prisma.rule.create({ data: { scope: 'domain', scopeRef: 'cache.example', kind: 'deterministic', action: 'needs_response', route: name } });

    const { threadId } = await deliverAndIngest(h, { from: 'Ida <ida@cache.example>', subject: 'Meet Tuesday?', text: 'Could we meet on Tuesday?' });
    await h.waitFor(threadId, (s) => s.state === 'drafted' && s.pendingEvents === 0, 60_000);

    const turns = h.anthropic.recentRequests().filter((r) => JSON.stringify(r.body.system).includes(marker));
    expect(turns).toHaveLength(3);
    const agent = h.anthropic.metrics().usage['claude-sonnet-4-6']!.tools!;
    expect(agent.calls).toBe(3);
    expect(agent.cacheWrite5m).toBeGreaterThan(1024);
    // Turns two and three read at least the tools and system prompt written by the first.
    expect(agent.cacheRead).toBeGreaterThan(2 * 1024);
    // The decision log and the steps count cached tokens as input (tokensOf): nothing is lost.
    const steps = await h.prisma.agentStep.findMany({ where: { accountId: h.accountId, gmailThreadId: threadId, name: 'model' } });
    const recorded = steps.reduce((sum, s) => sum + (s.tokensIn ?? 0), 0);
    expect(recorded).toBe(agent.input + agent.cacheRead + agent.cacheWrite5m + agent.cacheWrite1h);
  });
});
