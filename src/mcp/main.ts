// `npm run mcp`: the MCP server over stdio, for a client on this machine (Claude Desktop, Claude
// Code, an IDE) that starts it as a subprocess (docs/mcp.md). Stdout carries MCP and nothing else:
// every log line goes to stderr. It is the local operator's, as the CLI is: read and write tools.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { loadConfigOrExit } from '../config/env.js';
import { createPrismaClient } from '../db/client.js';
import { resolveDatabase } from '../db/resolve-database.js';
import { connectClient } from '../temporal/client.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { createLogger, logEverythingToStderr } from '../shared/log.js';
import { createMcpServer } from './tools.js';

logEverythingToStderr();
const cfg = loadConfigOrExit();
const log = createLogger('mcp');
const database = await resolveDatabase(cfg, log);
const prisma = createPrismaClient(database.url);
const client = await connectClient(cfg, await resolvePayloadKeys(cfg));
const server = createMcpServer({ cfg, prisma, client }, 'write');
const transport = new StdioServerTransport();

let closing = false;
async function close(): Promise<void> {
  if (closing) return;
  closing = true;
  await server.close();
  await prisma.$disconnect();
  await client.connection.close();
  await database.stop();
  process.exit(0);
}
// The client closes stdin when it is done with us, or signals.
transport.onclose = () => void close();
process.stdin.once('end', () => void close());
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void close());

await server.connect(transport);
log.info('MCP server on stdio');
