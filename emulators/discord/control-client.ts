// Typed client for the Discord emulator's control API (/__emulator/...), for tests, benchmarks and
// the dev mode. It plays Discord's side (creating webhooks, reading the channel); the app under test
// only ever sees webhook URLs.
import { callControl } from '../control-http.js';
import type { DiscordConfig, DiscordConfigPatch, FaultConfig } from './config.js';
import type { CreateWebhookInput, DiscordEmulatorMetrics, ReceivedMessage, WebhookRecord } from './server.js';

export class DiscordControlClient {
  readonly baseUrl: string;

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  private call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return callControl<T>(this.baseUrl, method, path, body);
  }

  info(): Promise<{ url: string; webhooks: WebhookRecord[]; config: DiscordConfig; faults: FaultConfig }> {
    return this.call('GET', 'info');
  }

  /** Creates a webhook; its `url` is what the product is configured with. */
  createWebhook(input: CreateWebhookInput = {}): Promise<WebhookRecord> {
    return this.call('POST', 'webhooks', input);
  }

  async listWebhooks(): Promise<WebhookRecord[]> {
    return (await this.call<{ webhooks: WebhookRecord[] }>('GET', 'webhooks')).webhooks;
  }

  /** Deletes a webhook as a channel admin would: its URL answers 404 Unknown Webhook from now on. */
  async deleteWebhook(id: string): Promise<void> {
    await this.call('DELETE', `webhooks/${encodeURIComponent(id)}`);
  }

  /** Messages the webhook posted, oldest first, with their current (edited) content and embeds. */
  async messages(webhookId?: string, opts: { includeDeleted?: boolean } = {}): Promise<ReceivedMessage[]> {
    const query = opts.includeDeleted ? '?includeDeleted=true' : '';
    const path =
      webhookId === undefined ? `messages${query}` : `webhooks/${encodeURIComponent(webhookId)}/messages${query}`;
    return (await this.call<{ messages: ReceivedMessage[] }>('GET', path)).messages;
  }

  /** Forgets all messages and empties the rate-limit buckets; webhooks, config and faults stay. */
  async clear(): Promise<void> {
    await this.call('POST', 'clear', {});
  }

  /** Back to the start-up state: no webhooks, no messages, zero metrics, start configuration, no faults. */
  async reset(): Promise<void> {
    await this.call('POST', 'reset', {});
  }

  metrics(): Promise<DiscordEmulatorMetrics> {
    return this.call('GET', 'metrics');
  }

  config(): Promise<DiscordConfig> {
    return this.call('GET', 'config');
  }

  /** Changes rate limits or latency, e.g. `{ rateLimits: { webhook: { limit: 2, windowSeconds: 0.5 } } }`. */
  configure(patch: DiscordConfigPatch): Promise<DiscordConfig> {
    return this.call('PUT', 'config', patch);
  }

  /** E.g. `{ rateLimited: 2 }` answers the next two webhook requests 429, `{ serverErrors: 1, serverErrorStatus: 502 }` one 502. */
  setFaults(patch: Partial<FaultConfig>): Promise<FaultConfig> {
    return this.call('PUT', 'faults', patch);
  }
}
