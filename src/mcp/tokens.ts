// The bearer tokens of the MCP server's HTTP transport: one per operator (or client), scoped read or
// write, revocable. The token is shown once when made; the database keeps only its SHA-256, so a
// copy of the database opens nothing. Tokens are 256 random bits: a plain hash suffices (no salt or
// slow hash needed for a secret nobody chose).
import { createHash, randomBytes } from 'node:crypto';
import type { PrismaClient } from '../db/client.js';
import { InvalidRequest } from '../operations/errors.js';
import type { McpScope } from './tools.js';

export const MCP_TOKEN_SCOPES = ['read', 'write'] as const satisfies readonly McpScope[];

const PREFIX = 'dimcp_';

const hashOf = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

export interface McpTokenView {
  id: string;
  name: string;
  scope: McpScope;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export async function createMcpToken(prisma: PrismaClient, input: { name: string; scope: McpScope }): Promise<{ id: string; token: string }> {
  const name = input.name.trim();
  if (!name || name.length > 100) throw new InvalidRequest('--name: expected 1 to 100 characters');
  if (!(MCP_TOKEN_SCOPES as readonly string[]).includes(input.scope)) throw new InvalidRequest(`--scope: expected one of ${MCP_TOKEN_SCOPES.join(', ')}`);
  const token = `${PREFIX}${randomBytes(32).toString('base64url')}`;
  const row = await prisma.mcpToken.create({ data: { name, scope: input.scope, tokenHash: hashOf(token) }, select: { id: true } });
  return { id: row.id, token };
}

export async function listMcpTokens(prisma: PrismaClient): Promise<McpTokenView[]> {
  const rows = await prisma.mcpToken.findMany({ orderBy: { createdAt: 'asc' }, select: { id: true, name: true, scope: true, createdAt: true, lastUsedAt: true, revokedAt: true } });
  return rows.map((r) => ({ ...r, scope: r.scope as McpScope }));
}

/** Revokes a token by its id; false when there is none, or it was revoked already. */
export async function revokeMcpToken(prisma: PrismaClient, id: string): Promise<boolean> {
  const { count } = await prisma.mcpToken.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } }).catch(() => ({ count: 0 }));
  return count > 0;
}

/** The live token a bearer presents (its use recorded), or null. */
export async function verifyMcpToken(prisma: PrismaClient, token: string): Promise<{ id: string; name: string; scope: McpScope } | null> {
  if (!token.startsWith(PREFIX) || token.length > 200) return null;
  const row = await prisma.mcpToken.findUnique({ where: { tokenHash: hashOf(token) }, select: { id: true, name: true, scope: true, revokedAt: true } });
  if (!row || row.revokedAt) return null;
  await prisma.mcpToken.update({ where: { id: row.id }, data: { lastUsedAt: new Date() } });
  return { id: row.id, name: row.name, scope: row.scope as McpScope };
}
