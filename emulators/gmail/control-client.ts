// Typed client for the emulator's control API (/__emulator/...), for tests, benchmarks and
// the dev mode. It plays the user and the world; the app under test talks Gmail via googleapis.
import { callControl } from '../control-http.js';
import type { FaultConfig } from './faults.js';
import type { LabelRecord } from './labels.js';
import type { OAuthClientRegistration } from './oauth.js';
import type { PushConfig, PushDeliveryLog, PushStats, Watch } from './push.js';
import type { QuotaConfig, QuotaStats } from './quota.js';
import type { MethodMetrics } from './metrics.js';
import type { CreatedAccount, IncomingMessage } from './world.js';

export type { CreatedAccount, IncomingMessage };

export interface EmulatorInfo {
  url: string;
  gmailRootUrl: string;
  tokenUrl: string;
  authUrl: string;
  revokeUrl: string;
  pemCertsUrl: string;
  jwkCertsUrl: string;
  defaultClient: OAuthClientRegistration;
  quota: QuotaConfig;
  accounts: string[];
}

export interface MailboxState {
  email: string;
  name: string;
  historyId: string;
  historyFloor: string;
  historyRecords: number;
  messagesTotal: number;
  threadsTotal: number;
  labels: LabelRecord[];
  drafts: Array<{ id: string; messageId: string; threadId: string }>;
  watch: Watch | null;
  /** Newest first, at most `messageLimit` (default 1000). */
  messages: Array<{ id: string; threadId: string; labelIds: string[]; internalDate: string; historyId: string; from: string; to: string; subject: string; snippet: string; headers?: Record<string, string> }>;
}

export interface EmulatorMetrics {
  methods: Record<string, MethodMetrics>;
  /** Calls read in full and not answered yet, per method (a slow answer's call has taken effect already). */
  inFlight: Record<string, number>;
  quota: QuotaStats;
  push: PushStats & { recent: PushDeliveryLog[] };
  oauth: { refreshes: number; codeExchanges: number };
  faults: { injectedErrors: number };
}

export interface DeliveredMessage {
  id: string;
  threadId: string;
  labelIds: string[];
  historyId: string;
}

export class EmulatorControlClient {
  readonly baseUrl: string;

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  private call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return callControl<T>(this.baseUrl, method, path, body);
  }

  private account(email: string, rest = ''): string {
    return `accounts/${encodeURIComponent(email)}${rest}`;
  }

  info(): Promise<EmulatorInfo> {
    return this.call('GET', 'info');
  }

  /** Creates a mailbox (or finds it) and returns a refresh token granting the client access to it. */
  createAccount(input: { email: string; name?: string; scopes?: string[]; clientId?: string }): Promise<CreatedAccount> {
    return this.call('POST', 'accounts', input);
  }

  listAccounts(): Promise<{ accounts: Array<{ email: string; name: string; messagesTotal: number; historyId: string }> }> {
    return this.call('GET', 'accounts');
  }

  /** `headers`: each message also carries the values of these headers (`messages[].headers`). */
  getState(email: string, opts: { messageLimit?: number; headers?: string[] } = {}): Promise<MailboxState> {
    const query = new URLSearchParams();
    if (opts.messageLimit !== undefined) query.set('messageLimit', String(opts.messageLimit));
    for (const name of opts.headers ?? []) query.append('header', name);
    const qs = query.toString();
    return this.call('GET', this.account(email, qs ? `?${qs}` : ''));
  }

  /** Delivers an incoming message (a new thread, or a reply into `threadId`). */
  deliver(email: string, message: IncomingMessage): Promise<DeliveredMessage> {
    return this.call('POST', this.account(email, '/messages'), message);
  }

  /** Applies/removes labels by id or name, as the Gmail UI does (a thread, or single messages). */
  modifyLabels(email: string, change: { messageIds?: string[]; threadId?: string; add?: string[]; remove?: string[] }): Promise<{ messages: Array<{ id: string; threadId: string; labelIds: string[] }>; historyId: string }> {
    return this.call('POST', this.account(email, '/labels'), change);
  }

  /** The user sets the signature of their primary address (HTML, as Gmail's settings store it). */
  setSignature(email: string, signature: string): Promise<{ signature: string }> {
    return this.call('PUT', this.account(email, '/signature'), { signature });
  }

  /** The user edits a draft's body in the Gmail UI (the draft gets a new message id). */
  editDraft(email: string, draftId: string, body: { text: string; html?: string }): Promise<{ id: string; messageId: string; threadId: string }> {
    return this.call('PUT', this.account(email, `/drafts/${encodeURIComponent(draftId)}`), body);
  }

  /** The user presses Send on a draft in the Gmail UI. */
  sendDraft(email: string, draftId: string): Promise<{ id: string; threadId: string; labelIds: string[] }> {
    return this.call('POST', this.account(email, `/drafts/${encodeURIComponent(draftId)}/send`), {});
  }

  /** The user discards a draft in the Gmail UI. */
  deleteDraft(email: string, draftId: string): Promise<void> {
    return this.call('DELETE', this.account(email, `/drafts/${encodeURIComponent(draftId)}`));
  }

  /** The user removes the app's access: refresh tokens answer invalid_grant, access tokens 401. */
  revoke(email: string): Promise<{ revoked: number }> {
    return this.call('POST', this.account(email, '/revoke'), {});
  }

  /** Forgets the mailbox's history: any earlier startHistoryId now gets 404. */
  expireHistory(email: string): Promise<{ historyFloor: string }> {
    return this.call('POST', this.account(email, '/history/expire'), {});
  }

  seed(email: string, opts: { seed?: number; count: number; spanDays?: number }): Promise<{ inserted: number; historyId: string }> {
    return this.call('POST', this.account(email, '/seed'), opts);
  }

  importMail(email: string, input: { format: 'eml' | 'mbox'; data: Buffer | string; labelIds?: string[] }): Promise<{ imported: number; skipped: number }> {
    const data = typeof input.data === 'string' ? Buffer.from(input.data, 'utf8') : input.data;
    return this.call('POST', this.account(email, '/import'), { format: input.format, dataBase64: data.toString('base64'), ...(input.labelIds ? { labelIds: input.labelIds } : {}) });
  }

  setQuota(patch: Partial<QuotaConfig>): Promise<QuotaConfig> {
    return this.call('PUT', 'quota', patch);
  }

  setFaults(patch: Partial<FaultConfig>): Promise<FaultConfig> {
    return this.call('PUT', 'faults', patch);
  }

  setPush(patch: Partial<PushConfig>): Promise<PushConfig> {
    return this.call('PUT', 'push', patch);
  }

  /** Waits until no push notification is scheduled or in flight. */
  flushPush(timeoutMs = 30_000): Promise<{ idle: boolean }> {
    return this.call('POST', 'push/flush', { timeoutMs });
  }

  /** `declineScopes`: the scopes the user leaves unticked on the consent screen (the grant lacks them). */
  setOAuth(patch: { denyConsent?: boolean; accessTokenTtlSeconds?: number; declineScopes?: string[]; rotateRefreshTokens?: boolean }): Promise<{ denyConsent: boolean; accessTokenTtlSeconds: number; declineScopes: string[]; rotateRefreshTokens: boolean }> {
    return this.call('PUT', 'oauth', patch);
  }

  /** Adds or replaces an OAuth client (`publishingStatus: 'testing'`: its new refresh tokens expire in 7 days). */
  registerClient(client: OAuthClientRegistration): Promise<OAuthClientRegistration> {
    return this.call('POST', 'oauth/clients', client);
  }

  /** Moves the emulator clock forward (token expiry, history retention, watch expiration). */
  advanceClock(ms: number): Promise<{ now: number }> {
    return this.call('POST', 'clock/advance', { ms });
  }

  metrics(): Promise<EmulatorMetrics> {
    return this.call('GET', 'metrics');
  }

  /** Back to an empty emulator with the start-up configuration. */
  reset(): Promise<void> {
    return this.call('POST', 'reset', {});
  }
}
