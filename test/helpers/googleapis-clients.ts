// Shared setup for the Gmail emulator contract tests: an in-process emulator, and googleapis
// clients authorised through the emulator's OAuth token endpoint, exactly as the app does it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuth2Client } from 'google-auth-library';
import { google, type gmail_v1 } from 'googleapis';
import { startGmailEmulator, type CreatedAccount, type GmailEmulatorOptions, type RunningGmailEmulator } from '../../emulators/gmail/index.js';

export interface ConnectedAccount {
  account: CreatedAccount;
  auth: OAuth2Client;
  gmail: gmail_v1.Gmail;
}

export function oauthClientFor(emu: RunningGmailEmulator, account: Pick<CreatedAccount, 'clientId' | 'clientSecret'>): OAuth2Client {
  return new OAuth2Client({
    clientId: account.clientId,
    clientSecret: account.clientSecret,
    endpoints: {
      oauth2TokenUrl: `${emu.url}/token`,
      oauth2AuthBaseUrl: `${emu.url}/o/oauth2/v2/auth`,
      oauth2RevokeUrl: `${emu.url}/revoke`,
      oauth2FederatedSignonPemCertsUrl: `${emu.url}/oauth2/v1/certs`,
    },
  });
}

/** A googleapis Gmail client with gaxios retries off, so error responses surface as they are. */
export function gmailClient(emu: RunningGmailEmulator, auth: OAuth2Client): gmail_v1.Gmail {
  // googleapis-common nests its own google-auth-library (another patch version): same class at
  // run time, different private declarations at type level, hence the cast.
  return google.gmail({ version: 'v1', auth: auth as unknown as gmail_v1.Options['auth'], rootUrl: `${emu.url}/`, retry: false });
}

export async function connect(emu: RunningGmailEmulator, email: string, name?: string, scopes?: string[]): Promise<ConnectedAccount> {
  const account = await emu.control.createAccount({ email, ...(name ? { name } : {}), ...(scopes ? { scopes } : {}) });
  const auth = oauthClientFor(emu, account);
  auth.setCredentials({ refresh_token: account.refreshToken });
  return { account, auth, gmail: gmailClient(emu, auth) };
}

/** Quotas off unless a test asks for them: most contract tests don't care about rate limits. */
export function startEmulator(opts: GmailEmulatorOptions = {}): Promise<RunningGmailEmulator> {
  return startGmailEmulator({ quota: false, ...opts });
}

/** Runs a googleapis call that must fail and returns its HTTP response (status, data, headers). */
export async function failure(call: Promise<unknown>): Promise<{ status: number; data: { error: { code: number; message: string; status: string; errors: Array<{ reason: string; domain: string; message: string }> } }; headers: Headers }> {
  try {
    await call;
  } catch (err) {
    const response = (err as { response?: { status: number; data: never; headers: Headers } }).response;
    if (response) return response;
    throw err;
  }
  throw new Error('expected the call to fail');
}

export const raw = (text: string): string => Buffer.from(text.replace(/\r?\n/g, '\r\n')).toString('base64url');

/** A loopback OAuth redirect receiver, as the CLI's consent flow runs one: every redirect's query is kept. */
export async function startRedirectReceiver(): Promise<{ redirectUri: string; received: URLSearchParams[]; close(): Promise<void> }> {
  const received: URLSearchParams[] = [];
  const receiver = createServer((req, res) => {
    received.push(new URL(req.url ?? '/', 'http://127.0.0.1').searchParams);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('You can close this window.');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  return {
    redirectUri: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/oauth2callback`,
    received,
    close: () => new Promise((resolve) => receiver.close(() => resolve())),
  };
}
