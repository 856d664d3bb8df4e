// The MCP server over Streamable HTTP (the app's HTTP server at /mcp) through the SDK's own client,
// against the real dev server, PostgreSQL and the emulators: no token, an unknown or revoked one, or a
// foreign Origin is refused before MCP; a read-only token reads but cannot act; a read-write token
// approves an auto-reply, sent once and journaled as decided by mcp; bad arguments change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAction } from '../../src/actions/journal.js';
import { prismaExecutor } from '../../src/db/sql-executor.js';
import { runMcpTokensCli } from '../../src/cli/mcp-tokens.js';
import { untrustedData } from '../../src/mcp/untrusted.js';
import { startAppServer, type AppServer } from '../helpers/app-server.js';
import type { InboxHarness } from '../helpers/inbox-harness.js';
import { actionSettings, actionUntil, httpClient, mcpToken, sentIn, textOf, waitingAutoReply } from '../helpers/mcp.js';

let app: AppServer;
let h: InboxHarness;
const db = () => prismaExecutor(h.prisma);

beforeAll(async () => {
  app = await startAppServer({ settings: { actions: actionSettings }, env: { MCP_ALLOWED_ORIGINS: 'https://assistant.example' } });
  h = app.h;
});

afterAll(async () => {
  await app?.close();
});

describe('over Streamable HTTP', () => {
  it('refuses a request without a token, with an unknown or revoked one, or from a foreign origin', async () => {
    await expect(httpClient(app.http.url, undefined)).rejects.toMatchObject({ code: 401, message: expect.stringMatching(/a bearer token is required/) });
    await expect(httpClient(app.http.url, 'dimcp_not-a-real-token')).rejects.toMatchObject({ code: 401, message: expect.stringMatching(/unknown or revoked token/) });
    const write = await mcpToken(h, 'write');
    await expect(httpClient(app.http.url, write.token, { Origin: 'http://evil.example' })).rejects.toMatchObject({ code: 403, message: expect.stringMatching(/origin http:\/\/evil.example is not allowed/) });
    // An origin MCP_ALLOWED_ORIGINS lists is let through to the token check.
    const allowed = await httpClient(app.http.url, write.token, { Origin: 'https://assistant.example' });
    expect((await allowed.listTools()).tools.length).toBeGreaterThan(0);
    await allowed.close();
    const lines: string[] = [];
    expect(await runMcpTokensCli({ ...h.cfg, LOG_LEVEL: 'warn' }, ['revoke', write.id], { out: (l) => lines.push(l) })).toBe(0);
    await expect(httpClient(app.http.url, write.token)).rejects.toMatchObject({ code: 401, message: expect.stringMatching(/unknown or revoked token/) });
    // The database keeps the token's hash only.
    const row = await h.prisma.mcpToken.findUniqueOrThrow({ where: { id: write.id } });
    expect(row.tokenHash).not.toContain(write.token.slice(6, 20));
    expect(row.revokedAt).not.toBeNull();
  });

  it('a read-only token lists what waits but cannot approve it', async () => {
    const { threadId, action } = await waitingAutoReply(h, 'mcp-read.example');
    const client = await httpClient(app.http.url, (await mcpToken(h, 'read')).token);
    try {
      const listed = untrustedData(textOf(await client.callTool({ name: 'list_actions', arguments: { thread_id: threadId } }))) as { id: string }[];
      expect(listed.map((a) => a.id)).toEqual([action.id]);
      const refused = await client.callTool({ name: 'approve_action', arguments: { action_id: action.id } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/read-only/);
      const snooze = await client.callTool({ name: 'snooze_thread', arguments: { thread_id: threadId, until: 'tomorrow' } });
      expect(snooze.isError).toBe(true);
    } finally {
      await client.close();
    }
    expect((await loadAction(db(), action.id))!.state).toBe('awaiting_approval');
    expect(await sentIn(h, threadId)).toHaveLength(0);
  });

  it('a read-write token approves an auto-reply: sent once, journaled as decided by mcp', async () => {
    const { threadId, action } = await waitingAutoReply(h, 'mcp-http.example');
    const client = await httpClient(app.http.url, (await mcpToken(h, 'write')).token);
    try {
      const unknown = await client.callTool({ name: 'approve_action', arguments: { action_id: 'no-such-action' } });
      expect(unknown.isError).toBe(true);
      expect(textOf(unknown)).toMatch(/^no action no-such-action/);
      const badTime = await client.callTool({ name: 'send_later', arguments: { thread_id: threadId, in: 'soonish' } });
      expect(textOf(badTime)).toMatch(/^refused: --in: .*soonish/);
      expect((await loadAction(db(), action.id))!.state).toBe('awaiting_approval');
      const approved = await client.callTool({ name: 'approve_action', arguments: { action_id: action.id } });
      expect(approved.isError, textOf(approved)).toBeFalsy();
    } finally {
      await client.close();
    }
    const done = await actionUntil(h, threadId, 'auto_reply', (a) => a.state === 'done');
    expect(done.decidedBy).toBe('mcp');
    expect((await sentIn(h, threadId)).map((m) => m.id)).toEqual([done.result!.sentMessageId]);
  });
});
