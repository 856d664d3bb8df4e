// A googleapis Gmail client for use inside Temporal activities: no hidden retries (the activity retry
// policy owns them), a hard HTTP timeout, and refreshed tokens handed to the caller for persistence.

// googleapis' own OAuth2 client (googleapis-common pins its google-auth-library), as google.auth.OAuth2 is.
import { OAuth2Client, type googleAuthLibrary } from 'googleapis-common';
// Gmail's module alone: googleapis' index loads every Google API (~0.7 s of CPU at each process start).
import { gmail_v1 } from 'googleapis/build/src/apis/gmail/v1.js';

export interface GmailTokens {
  refresh_token?: string | null;
  access_token?: string | null;
  /** Epoch ms. Pass it along with access_token: without it google-auth-library refreshes and replays on any 401/403. */
  expiry_date?: number | null;
}

export interface GmailClientOptions {
  /** Emulator root, e.g. http://127.0.0.1:PORT/ (any path prefix is dropped by googleapis). Default: Google. */
  rootUrl?: string;
  clientId: string;
  clientSecret: string;
  /** OAuth token endpoint. Default: https://oauth2.googleapis.com/token. */
  tokenUrl?: string;
  /** OAuth revoke endpoint. Default: https://oauth2.googleapis.com/revoke. */
  revokeUrl?: string;
  credentials: { refresh_token: string; access_token?: string; expiry_date?: number };
  /** Called after every token refresh with the new tokens (access_token, expiry_date, maybe a new refresh_token). */
  onTokens?: (tokens: GmailTokens) => void;
  /** Per HTTP request, token refresh included. Default 30 s. */
  timeoutMs?: number;
}

export interface GmailClient {
  gmail: gmail_v1.Gmail;
  auth: OAuth2Client;
}

export const DEFAULT_GMAIL_TIMEOUT_MS = 30_000;

// gaxios retries when either `retry` is truthy or a `retryConfig` object exists, defaulting to 3 attempts;
// retryConfig.retry = 0 is the switch that wins in both cases (google-auth-library's token refresh passes
// its own retryConfig, which is deep-merged with these defaults).
const NO_RETRIES = { retry: false, retryConfig: { retry: 0, noResponseRetries: 0 } } as const;

export function createGmailClient(options: GmailClientOptions): GmailClient {
  const timeout = options.timeoutMs ?? DEFAULT_GMAIL_TIMEOUT_MS;
  const auth = new OAuth2Client({
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    endpoints: {
      ...(options.tokenUrl ? { oauth2TokenUrl: options.tokenUrl } : {}),
      ...(options.revokeUrl ? { oauth2RevokeUrl: options.revokeUrl } : {}),
    },
    // Applies to every request through this client: Gmail calls and token refreshes alike.
    transporterOptions: { timeout, ...NO_RETRIES, retryConfig: { ...NO_RETRIES.retryConfig } },
  });
  auth.setCredentials({ ...options.credentials });

  const onTokens = options.onTokens;
  if (onTokens) {
    auth.on('tokens', (tokens: googleAuthLibrary.Credentials) => {
      onTokens({ refresh_token: tokens.refresh_token, access_token: tokens.access_token, expiry_date: tokens.expiry_date });
    });
  }

  // A 401 from Gmail means the cached access token is dead even if expiry_date says otherwise (revoked, or
  // the server forgot it). Drop it so the next call through this client refreshes instead of replaying it.
  const tokenUrl = options.tokenUrl ?? 'https://oauth2.googleapis.com/token';
  auth.transporter.interceptors.response.add({
    rejected: (err) => {
      const url = String(err.config?.url ?? '');
      if (err.response?.status === 401 && !url.startsWith(tokenUrl)) {
        auth.credentials = { ...auth.credentials, access_token: undefined, expiry_date: undefined };
      }
      throw err;
    },
  });

  const gmail = new gmail_v1.Gmail({
    auth,
    ...(options.rootUrl ? { rootUrl: options.rootUrl } : {}),
    timeout,
    ...NO_RETRIES,
    retryConfig: { ...NO_RETRIES.retryConfig },
  });
  return { gmail, auth };
}
