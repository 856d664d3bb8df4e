// Shared setup for tests that talk to the Gmail emulator through googleapis, exactly as production does.
import { startGmailEmulator, type GmailEmulatorOptions, type RunningGmailEmulator } from '../../emulators/gmail/index.js';
import { createGmailClient, GmailService, type GmailClient, type GmailTokens } from '../../src/gmail/index.js';

export interface TestAccount extends GmailClient {
  email: string;
  refreshToken: string;
  clientId: string;
  clientSecret: string;
  service: GmailService;
  /** Every `tokens` event the client emitted. */
  refreshedTokens: GmailTokens[];
}

export interface EmulatorHarness {
  emulator: RunningGmailEmulator;
  gmailRootUrl: string;
  tokenUrl: string;
  /** A fresh mailbox with a client authorised for it (refresh token only: the first call refreshes). */
  account(name: string, options?: { timeoutMs?: number }): Promise<TestAccount>;
  /** Another client for an existing grant. */
  client(
    account: Pick<TestAccount, 'refreshToken' | 'clientId' | 'clientSecret'>,
    options?: { timeoutMs?: number; accessToken?: string; expiryDate?: number },
  ): GmailClient & { service: GmailService };
  close(): Promise<void>;
}

let counter = 0;

export async function startHarness(options: GmailEmulatorOptions = {}): Promise<EmulatorHarness> {
  const emulator = await startGmailEmulator({ quota: false, ...options });
  const info = await emulator.control.info();

  const makeClient = (
    account: Pick<TestAccount, 'refreshToken' | 'clientId' | 'clientSecret'>,
    opts: { timeoutMs?: number; accessToken?: string; expiryDate?: number },
    onTokens?: (tokens: GmailTokens) => void,
  ): GmailClient =>
    createGmailClient({
      rootUrl: info.gmailRootUrl,
      tokenUrl: info.tokenUrl,
      clientId: account.clientId,
      clientSecret: account.clientSecret,
      credentials: {
        refresh_token: account.refreshToken,
        ...(opts.accessToken ? { access_token: opts.accessToken } : {}),
        ...(opts.expiryDate ? { expiry_date: opts.expiryDate } : {}),
      },
      ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
      ...(onTokens ? { onTokens } : {}),
    });

  return {
    emulator,
    gmailRootUrl: info.gmailRootUrl,
    tokenUrl: info.tokenUrl,
    async account(name, opts = {}) {
      const email = `${name}-${process.pid}-${++counter}@example.com`;
      const created = await emulator.control.createAccount({ email, name });
      const refreshedTokens: GmailTokens[] = [];
      const client = makeClient(created, opts, (tokens) => refreshedTokens.push(tokens));
      return {
        ...client,
        email,
        refreshToken: created.refreshToken,
        clientId: created.clientId,
        clientSecret: created.clientSecret,
        service: new GmailService(client.gmail),
        refreshedTokens,
      };
    },
    client(account, opts = {}) {
      const client = makeClient(account, opts);
      return { ...client, service: new GmailService(client.gmail) };
    },
    close: () => emulator.close(),
  };
}

/** Calls `fn` and returns what it threw (fails the test if it did not throw). */
export async function caught(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}
