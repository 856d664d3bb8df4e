// `npm run dev` started, stopped and started again on the same DATA_DIR: the demo continues with its
// mailbox and database, and mail delivered in each run is processed, a reply to the last run's too.
// The second run is `npm run dev -- --imap`: beside the Gmail demo, a demo mailbox on a local Dovecot
// and Postfix, connected and processed through the same workers.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { expect, it } from 'vitest';
import { waitUntil } from '../helpers/wait-until.js';
import { unusedDatabaseUrl } from '../helpers/scratch-database.js';
import { createPrismaClient } from '../../src/db/client.js';
import { DEMO_EMAIL } from '../../src/dev/demo.js';
import { IMAP_DEMO_EMAIL } from '../../src/dev/imap-demo.js';
import { EmulatorControlClient } from '../../emulators/gmail/index.js';
import { syncWorkflowId } from '../../src/sync/contracts.js';
import { threadWorkflowId } from '../../src/thread/contracts.js';
import { diagnoseWorkflows } from '../helpers/workflow-diagnosis.js';
import { devPorts, portOpen, startDev, whileRunning, untilRunning } from '../helpers/dev-process.js';

it('started, stopped and started again (with --imap) on the same DATA_DIR, processes newly delivered demo mail each time', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'durable-inbox-dev-restart-'));
  const ports = await devPorts();
  const database = unusedDatabaseUrl(); // its own, as above
  const prisma = createPrismaClient(database.url);
  const gmail = new EmulatorControlClient(`http://127.0.0.1:${ports.gmail}`);
  const accountIds: string[] = [];
  let previous: { id: string; threadId: string } | undefined;
  try {
    for (let round = 1; round <= 2; round++) {
      // At info, a slow round's failure shows what the product did (the output is only printed then).
      const imap = round === 2;
      const dev = await startDev(dataDir, ports, 0, database.url, 'info', imap ? ['--imap'] : []);
      await whileRunning(dev, async () => {
        await untilRunning(dev, `round ${round}`);
        const account = await prisma.account.findUniqueOrThrow({ where: { email: DEMO_EMAIL } });
        accountIds.push(account.id);
        // The restarted demo continues with its mailbox (the emulator's state file), not a new account.
        if (round > 1) expect(account.id).toBe(accountIds[0]);

        const mail = await gmail.deliver(DEMO_EMAIL, {
          from: { name: 'Carol Reyes', email: 'carol@example.org' },
          to: [DEMO_EMAIL],
          subject: `Quarterly numbers, round ${round}`,
          text: 'Hi,\n\nCould you send me the quarterly numbers by Friday?\n\nCarol',
        });
        const handled = (what: string, m: { id: string; threadId: string }) =>
          waitUntil(
            `round ${round}: ${what} processed`,
            async () => {
              const thread = await prisma.thread.findFirst({
                where: { accountId: account.id, gmailThreadId: m.threadId },
              });
              return thread?.handledMessageIds.includes(m.id);
            },
            { timeoutMs: 30_000, everyMs: 250 },
          ).catch(async (err: Error) => {
            const workflows = [syncWorkflowId(account.id), threadWorkflowId(account.id, m.threadId)];
            const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporal}` });
            const diagnosis = await diagnoseWorkflows(connection, workflows).finally(() => connection.close());
            // The emulator's push deliveries: whether the mail's notification reached the HTTP server.
            const push = await gmail.metrics().then(
              (m) => JSON.stringify(m.push, null, 1),
              (e: Error) => e.message,
            );
            throw new Error(
              `${err.message}\n${diagnosis}\n--- push deliveries:\n${push}\n--- npm run dev said:\n${dev.output.slice(-8000)}`,
            );
          });
        await handled('the new mail', mail);
        if (previous) {
          // The mailbox is the one the last run left: a reply joins the thread of its mail, and is processed too.
          const reply = await gmail.deliver(DEMO_EMAIL, {
            from: { name: 'Carol Reyes', email: 'carol@example.org' },
            threadId: previous.threadId,
            text: 'Any news on the numbers?',
          });
          expect(reply.threadId).toBe(previous.threadId);
          await handled("the reply in the last run's thread", reply);
        }
        previous = mail;
        if (imap) {
          // The IMAP demo mailbox: connected over IMAP, its three demo messages each a thread handled.
          const imapAccount = await waitUntil('the IMAP demo account', async () => (await prisma.account.findUnique({ where: { email: IMAP_DEMO_EMAIL } })) ?? false, { timeoutMs: 30_000 });
          expect(imapAccount.provider).toBe('imap');
          await waitUntil('the IMAP demo mail processed', async () => {
            const threads = await prisma.thread.findMany({ where: { accountId: imapAccount.id } });
            return threads.length === 3 && threads.every((t) => t.handledMessageIds.length > 0 && t.state !== 'pending') && threads;
          }, { timeoutMs: 90_000, everyMs: 250 }).catch(async (err: Error) => {
            const threads = await prisma.thread.findMany({ where: { accountId: imapAccount.id }, select: { gmailThreadId: true, state: true, handledMessageIds: true } });
            throw new Error(`${err.message}; its threads: ${JSON.stringify(threads)}\n--- npm run dev said:\n${dev.output.slice(-8000)}`);
          });
          expect(dev.output).toContain(`IMAP demo mailbox: ${IMAP_DEMO_EMAIL}`);
        }
      });
      for (const port of Object.values(ports))
        expect(await portOpen(port), `round ${round}: port ${port} still open`).toBe(false);
    }
  } finally {
    await prisma.$disconnect();
    await rm(dataDir, { recursive: true, force: true });
    await database.drop();
  }
}, 480_000);
