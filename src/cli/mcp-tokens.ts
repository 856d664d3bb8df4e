// `npm run cli -- mcp-tokens ...`: the bearer tokens of the MCP server's HTTP transport (docs/mcp.md).
//   create --name NAME [--scope read|write]   a new token, shown once (default scope read)
//   list                                      every token: name, scope, last use, revoked
//   revoke <token id>                         the token opens nothing from now on
import type { Env } from '../config/env.js';
import { createMcpToken, listMcpTokens, MCP_TOKEN_SCOPES, revokeMcpToken } from '../mcp/tokens.js';
import type { McpScope } from '../mcp/tools.js';
import { parseSubcommand, UsageError, withDatabase, type CliIo } from './command.js';
import { printTable } from './table.js';

export const USAGE = `usage: npm run cli -- mcp-tokens create --name NAME [--scope ${MCP_TOKEN_SCOPES.join('|')}]
       npm run cli -- mcp-tokens list
       npm run cli -- mcp-tokens revoke <token id>
read: the read tools only; write: the read tools and the acts (approve, snooze, ...), under the safety policy`;

const OPTIONS = {
  name: { type: 'string' },
  scope: { type: 'string', default: 'read' },
} as const;

const when = (d: Date | null) => (d ? d.toISOString().slice(0, 19).replace('T', ' ') : '-');

/** Entry for src/cli/main.ts. Returns the exit code. */
export async function runMcpTokensCli(cfg: Env, argv: string[], io: CliIo = { out: (l) => console.log(l) }): Promise<number> {
  const parsed = parseSubcommand(io, { name: 'mcp-tokens', usage: USAGE, subcommands: ['create', 'list', 'revoke'], options: OPTIONS }, argv);
  if (typeof parsed === 'number') return parsed;
  const { sub, values, positionals } = parsed;
  return withDatabase(cfg, io, { name: 'mcp-tokens', usage: USAGE }, async (prisma) => {
    if (sub === 'create') {
      if (!values.name) throw new UsageError('create needs --name (who or what the token is for)');
      const { id, token } = await createMcpToken(prisma, { name: values.name, scope: values.scope as McpScope });
      io.out(`token ${id} (${values.scope}) for ${values.name}; shown this once, keep it secret:`);
      io.out(token);
      io.out(`use it as the header "Authorization: Bearer <token>" on ${cfg.PUBLIC_BASE_URL ?? `http://127.0.0.1:${cfg.HTTP_PORT}`}/mcp (docs/mcp.md); revoke with npm run cli -- mcp-tokens revoke ${id}`);
      return;
    }
    if (sub === 'list') {
      const tokens = await listMcpTokens(prisma);
      if (tokens.length === 0) return io.out('No MCP tokens. Make one: npm run cli -- mcp-tokens create --name laptop --scope write');
      printTable(
        io.out,
        ['ID', 'NAME', 'SCOPE', 'CREATED', 'LAST USED', 'REVOKED'],
        tokens.map((t) => [t.id, t.name, t.scope, when(t.createdAt), when(t.lastUsedAt), when(t.revokedAt)]),
      );
      return;
    }
    const id = positionals[0];
    if (!id) throw new UsageError('revoke needs a token id (see npm run cli -- mcp-tokens list)');
    if (!(await revokeMcpToken(prisma, id))) throw new UsageError(`no live token ${id} (see npm run cli -- mcp-tokens list)`);
    io.out(`revoked ${id}: it opens nothing from now on`);
  });
}
