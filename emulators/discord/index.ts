// A local Discord webhook endpoint for tests, benchmarks and demo mode: Execute Webhook
// (POST /api/webhooks/{id}/{token}, ?wait, ?thread_id), Get Webhook with Token, and get/edit/delete of
// the webhook's messages, with Discord's validation errors and rate-limit headers and 429s.
// Control API under /__emulator/ (see control-client.ts and docs/discord-emulator.md).
import type { DiscordConfig, DiscordConfigPatch, FaultConfig } from './config.js';
import { applyConfigPatch, DEFAULT_CONFIG } from './config.js';
import { DiscordControlClient } from './control-client.js';
import { DiscordEmulatorServer, type CreateWebhookInput, type WebhookRecord } from './server.js';

export type { DiscordConfig, DiscordConfigPatch, FaultConfig };
export type {
  CreateWebhookInput,
  DiscordEmulatorMetrics,
  DiscordMessage,
  ReceivedMessage,
  WebhookRecord,
} from './server.js';
export { DiscordControlClient } from './control-client.js';
export { EmulatorControlError } from '../control-http.js';

export interface DiscordEmulatorOptions extends DiscordConfigPatch {
  /** 0 or omitted: a free port. */
  port?: number;
  host?: string;
  /** Webhooks to create at start; `webhooks[i]` of the result. */
  webhooks?: CreateWebhookInput[];
  /** Clock for rate-limit windows and timestamps (in-process only); default Date.now. */
  now?: () => number;
}

export interface RunningDiscordEmulator {
  /** Base URL, e.g. http://127.0.0.1:8237; webhook URLs are `${url}/api/webhooks/<id>/<token>`. */
  url: string;
  port: number;
  /** Webhooks created from `options.webhooks`. */
  webhooks: WebhookRecord[];
  /** The HTTP control API, as a separate process would use it. */
  control: DiscordControlClient;
  /** The same controls, synchronous and in-process. */
  server: DiscordEmulatorServer;
  close(): Promise<void>;
}

export async function startDiscordEmulator(opts: DiscordEmulatorOptions = {}): Promise<RunningDiscordEmulator> {
  const { port = 0, host = '127.0.0.1', webhooks = [], now, ...patch } = opts;
  const server = new DiscordEmulatorServer(applyConfigPatch(DEFAULT_CONFIG, patch), now);
  const url = await server.listen(port, host);
  const created = webhooks.map((w) => server.createWebhook(w));
  return {
    url,
    port: Number(new URL(url).port),
    webhooks: created,
    control: new DiscordControlClient(url),
    server,
    close: () => server.close(),
  };
}

export { spawnDiscordEmulator, type ChildDiscordEmulator } from './child.js';
