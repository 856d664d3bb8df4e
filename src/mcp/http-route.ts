// The MCP server over Streamable HTTP, on the app's HTTP server at /mcp (docs/mcp.md). Stateless:
// each POST gets a server of its own, scoped by the bearer token it carries (read or write); no
// session, no server-to-client stream (GET and DELETE are refused by the transport). Before MCP
// sees a request: an Origin header that is not allowed is refused (403, the spec's DNS rebinding
// defence), and so is a request without a live token (401). The HTTP server listens on loopback
// unless HTTP_HOST says otherwise.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { sendJson } from '../shared/json-response.js';
import { createLogger } from '../shared/log.js';
import type { RouteHandler, Routes } from '../shared/http-server.js';
import { verifyMcpToken } from './tokens.js';
import { createMcpServer, type McpDeps } from './tools.js';

export const MCP_PATH = '/mcp';

const log = createLogger('mcp');

function bearerOf(req: IncomingMessage): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m ? m[1]! : null;
}

function refuse(res: ServerResponse, status: 401 | 403, message: string): void {
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="durable-inbox mcp"');
  sendJson(res, status, { jsonrpc: '2.0', error: { code: -32001, message }, id: null });
}

export function mcpRoute(deps: McpDeps & { allowedOrigins: readonly string[] }): RouteHandler {
  const allowed = new Set(deps.allowedOrigins.map((o) => new URL(o).origin));
  return async (req, res) => {
    const origin = req.headers.origin;
    if (origin !== undefined && !allowed.has(origin)) return refuse(res, 403, `origin ${origin} is not allowed (MCP_ALLOWED_ORIGINS)`);
    const bearer = bearerOf(req);
    const token = bearer ? await verifyMcpToken(deps.prisma, bearer) : null;
    if (!token) return refuse(res, 401, bearer ? 'unknown or revoked token' : 'a bearer token is required (npm run cli -- mcp-tokens create)');
    const server = createMcpServer(deps, token.scope);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    log.debug('mcp request', { token: token.id, scope: token.scope });
    await transport.handleRequest(req, res);
  };
}

/** POST carries MCP; GET and DELETE are answered by the transport (no sessions here), after the same checks. */
export function mcpRoutes(deps: McpDeps & { allowedOrigins: readonly string[] }): Routes {
  const route = mcpRoute(deps);
  return { [`POST ${MCP_PATH}`]: route, [`GET ${MCP_PATH}`]: route, [`DELETE ${MCP_PATH}`]: route };
}
