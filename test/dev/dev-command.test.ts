// `npm run dev` as a user runs it: it comes up on embedded defaults (its own Temporal dev server,
// Postgres, the emulators with a demo mailbox), thread workflows appear, and Ctrl-C stops it all.
// Started again on the same DATA_DIR: test/dev/dev-restart.test.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { expect, it } from 'vitest';
import { waitUntil } from '../helpers/wait-until.js';
import { unusedDatabaseUrl } from '../helpers/scratch-database.js';
import { createPrismaClient } from '../../src/db/client.js';
import { DEMO_AUTO_REPLY_SENDER, DEMO_EMAIL } from '../../src/dev/demo.js';
import { DEMO_NEWS_SENDER } from '../../src/dev/demo-lessons.js';
import { devPorts, portOpen, startDev, stopDev, untilRunning, whileRunning } from '../helpers/dev-process.js';

it('comes up with the demo mailbox flowing into thread workflows and its actions, and Ctrl-C leaves nothing running', async () => {
  const startedAt = Date.now();
  const dataDir = await mkdtemp(join(tmpdir(), 'durable-inbox-dev-'));
  const ports = await devPorts();
  // Its own database (npm run dev creates and migrates it): the demo's schedules poke every active
  // account, and the suite's other files keep adding theirs to the shared one.
  const database = unusedDatabaseUrl();
  const dev = await startDev(dataDir, ports, 10, database.url);
  try {
    await whileRunning(dev, async () => {
      await untilRunning(dev, 'first start');
      const { output } = dev;
      expect(output).toContain(`http://127.0.0.1:${ports.ui}`);
      const health = await fetch(`http://127.0.0.1:${ports.http}/healthz`);
      expect(health.status).toBe(200);
      // Degraded, not down, when other tests' accounts in the shared database need attention.
      expect(await health.json()).toMatchObject({
        status: expect.stringMatching(/^(ok|degraded)$/),
        temporal: { ok: true },
        postgres: { ok: true },
      });
      expect(output).toContain(
        `Metrics           http://127.0.0.1:${ports.http}/metrics  (Temporal SDK: http://127.0.0.1:${ports.sdkMetrics}/metrics)`,
      );
      // The approvals list page opens with the token printed for this run; approval requests go to the Discord emulator.
      const approvals = /Approvals +(http:\S+)/.exec(output)?.[1];
      expect(approvals, output).toMatch(
        new RegExp(`^http://127\\.0\\.0\\.1:${ports.http}/approvals\\?token=[\\w-]{24}$`),
      );
      expect((await fetch(approvals!)).status).toBe(200);
      expect(output).toContain(`Discord emulator  http://127.0.0.1:${ports.discord}/__emulator/messages`);
      const discord = (await (await fetch(`http://127.0.0.1:${ports.discord}/__emulator/info`)).json()) as {
        webhooks: unknown[];
      };
      expect(discord.webhooks).toHaveLength(1);

      const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporal}` });
      const prisma = createPrismaClient(database.url);
      try {
        const threads = await waitUntil(
          'thread workflows of the demo mailbox',
          async () => {
            const { count } = await connection.workflowService.countWorkflowExecutions({
              namespace: 'default',
              query: 'WorkflowType = "threadWorkflow"',
            });
            return Number(count ?? 0) > 0 && Number(count);
          },
          { timeoutMs: 60_000, everyMs: 500 },
        );
        expect(threads).toBeGreaterThan(0);

        // The demo shows the actions: its newsletters labelled and archived, and one auto-reply
        // waiting for approval (as a draft in Gmail).
        const since = new Date(startedAt);
        const actions = await waitUntil(
          'the demo actions',
          async () => {
            const rows = await prisma.action.findMany({
              where: { account: { email: DEMO_EMAIL }, createdAt: { gte: since } },
            });
            const newsletter =
              rows.some((a) => a.kind === 'archive' && a.state === 'done') &&
              rows.some((a) => a.kind === 'add_label' && a.argument === 'Newsletters' && a.state === 'done');
            const autoReply = rows.find(
              (a) =>
                a.kind === 'auto_reply' &&
                a.state === 'awaiting_approval' &&
                (a.result as { draftId?: string } | null)?.draftId,
            );
            return newsletter && autoReply ? rows : undefined;
          },
          { timeoutMs: 60_000, everyMs: 500 },
        );
        // The demo's triage lesson waits for the user (src/dev/demo-lessons.ts).
        const lesson = await prisma.lesson.findFirst({ where: { scopeRef: DEMO_NEWS_SENDER, state: 'proposed', kind: 'triage' } });
        expect(lesson).not.toBeNull();
        // And its writing lesson: the demo user answered two questions with "Hello" (src/dev/demo-lessons.ts), announced on Discord.
        const demoAccount = await prisma.account.findUniqueOrThrow({ where: { email: DEMO_EMAIL } });
        const writing = await waitUntil(
          'the demo writing lesson',
          () => prisma.lesson.findFirst({ where: { accountId: demoAccount.id, kind: 'preference', state: 'proposed' } }).then((l) => l ?? undefined),
          { timeoutMs: 90_000, everyMs: 500 },
        );
        await waitUntil(
          "the demo writing lesson's Discord message",
          async () => {
            const { messages } = (await (await fetch(`http://127.0.0.1:${ports.discord}/__emulator/messages`)).json()) as { messages: { message: { content: string } }[] };
            // Announced by kind and link; its text quotes the user's mail, so the message does not.
            const told = messages.find((m) => m.message.content.includes(writing.id));
            if (told) expect(told.message.content).not.toContain('Hello');
            return told?.message.content.includes('Writing lesson proposed');
          },
          { timeoutMs: 30_000, everyMs: 500 },
        );
        // The demo's agent: the scheduling profile read the thread and drafted the reply.
        const agentSteps = await waitUntil(
          'the demo agent run',
          async () => {
            const steps = await prisma.agentStep.findMany({
              where: { profile: 'scheduling', startedAt: { gte: since } },
              orderBy: { seq: 'asc' },
            });
            return steps.filter((s) => s.name === 'model').length === 3 ? steps : undefined;
          },
          { timeoutMs: 60_000, everyMs: 500 },
        );
        expect(agentSteps.map((s) => s.name)).toEqual(['model', 'read_thread', 'model', 'write_draft', 'model']);
        const autoReply = actions.find((a) => a.kind === 'auto_reply')!;
        expect(autoReply.sender).toBe(DEMO_AUTO_REPLY_SENDER);
        // Its Discord notification, in the emulator, links to its page.
        const posted = await waitUntil(
          "the auto-reply's Discord message",
          async () => {
            const { messages } = (await (
              await fetch(`http://127.0.0.1:${ports.discord}/__emulator/messages`)
            ).json()) as { messages: { message: { content: string } }[] };
            return messages.find((m) => m.message.content.includes(`/approvals/a/${autoReply.id}?exp=`));
          },
          { timeoutMs: 30_000, everyMs: 500 },
        );
        const link = /<(http:[^>]+)>/.exec(posted.message.content)![1]!;
        const page = await fetch(link);
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('auto_reply');

        // One process: our metrics on the HTTP server count what the demo did; the SDK's on their own port.
        const ours = await (await fetch(`http://127.0.0.1:${ports.http}/metrics`)).text();
        expect(ours).toMatch(/^durable_inbox_drafts_total [1-9]/m);
        expect(ours).toMatch(/^durable_inbox_gmail_calls_total\{method="threads\.get"\} [1-9]/m);
        expect(ours).toMatch(/^durable_inbox_llm_calls_total\{purpose="classify",result="ok"\} [1-9]/m);
        expect(ours).toMatch(/^durable_inbox_actions_total\{kind="auto_reply",state="awaiting_approval"\} 1$/m);
        const sdk = await (await fetch(`http://127.0.0.1:${ports.sdkMetrics}/metrics`)).text();
        expect(sdk).toMatch(/^temporal_\w+\{.*task_queue="durable-inbox"/m);
      } finally {
        await connection.close();
        await prisma.$disconnect();
      }
    });
  } finally {
    await rm(dataDir, { recursive: true, force: true });
    await database.drop();
  }
  for (const port of Object.values(ports)) expect(await portOpen(port), `port ${port} still open`).toBe(false);
}, 240_000);

it('Ctrl-C during start-up stops what has started and exits 0', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'durable-inbox-dev-early-'));
  const ports = await devPorts();
  const database = unusedDatabaseUrl();
  const dev = await startDev(dataDir, ports, 0, database.url, 'info');
  try {
    // The Temporal dev server (a child process) is up; the workers and the HTTP server are not yet.
    await waitUntil(
      'the Temporal dev server started by npm run dev',
      async () => {
        if (dev.child.exitCode !== null) throw new Error(`dev exited:\n${dev.output.slice(-3000)}`);
        return dev.output.includes('Temporal dev server ready');
      },
      { timeoutMs: 90_000, everyMs: 100 },
    );
    expect(dev.output).not.toContain('durable-inbox is running');
    expect(await stopDev(dev), dev.output.slice(-3000)).toBe(0);
    for (const port of Object.values(ports)) expect(await portOpen(port), `port ${port} still open`).toBe(false);
  } finally {
    if (dev.child.exitCode === null) dev.child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
    await database.drop();
  }
}, 150_000);
