// Standalone Gmail emulator:
//   npm run emulator -- --seed 1 --messages 5000 --quota legacy --port 8235
// Prints the URLs, the account and the OAuth client/refresh token to use; `--json` prints one
// JSON line instead (for parents that spawn it). A bad flag prints the problem and exits 2.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isMainModule } from '../../src/shared/main-module.js';
import { startGmailEmulator, type GmailEmulatorOptions } from './index.js';

const USAGE = `Usage: npm run emulator -- [options]

  --port N                 listen port (default 8235; 0 = any free port)
  --host ADDR              listen address (default 127.0.0.1)
  --seed N                 seed for generated mail, ids and faults (default 1)
  --messages N             seed the account with N generated messages (default 0)
  --span-days N            spread seeded mail over N days (default 30)
  --account EMAIL          the account to create (default me@example.com)
  --name NAME              its display name (default "Emulated User")
  --quota legacy|2026      quota profile (default legacy)
  --no-quota               turn quotas off
  --push-endpoint URL      where Pub/Sub push notifications are POSTed (all topics)
  --push-audience AUD      JWT audience of push tokens (default: the endpoint URL)
  --history-retention-hours N   history kept for N hours (default 168)
  --token-ttl SECONDS      access token lifetime (default 3599)
  --client-id ID           OAuth client id (default durable-inbox-emulator.apps.googleusercontent.com)
  --client-secret SECRET   OAuth client secret
  --import-mbox PATH       import an mbox file into the account (repeatable)
  --import-eml PATH        import an .eml file into the account (repeatable)
  --json                   print one JSON line with the connection details
  --help                   show this help`;

class UsageError extends Error {}

function intFlag(name: string, value: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} expects an integer between ${min} and ${max}, got "${value}"`);
  return n;
}

export interface CliConfig {
  emulator: GmailEmulatorOptions;
  account: { email: string; name: string };
  messages: number;
  spanDays: number;
  mbox: string[];
  eml: string[];
  json: boolean;
}

export function parseCli(argv: string[]): CliConfig | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        seed: { type: 'string' },
        messages: { type: 'string' },
        'span-days': { type: 'string' },
        account: { type: 'string' },
        name: { type: 'string' },
        quota: { type: 'string' },
        'no-quota': { type: 'boolean' },
        'push-endpoint': { type: 'string' },
        'push-audience': { type: 'string' },
        'history-retention-hours': { type: 'string' },
        'token-ttl': { type: 'string' },
        'client-id': { type: 'string' },
        'client-secret': { type: 'string' },
        'import-mbox': { type: 'string', multiple: true },
        'import-eml': { type: 'string', multiple: true },
        json: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const v = parsed.values;
  if (v.help) return 'help';
  if (v.quota !== undefined && v.quota !== 'legacy' && v.quota !== '2026') throw new UsageError(`--quota expects "legacy" or "2026", got "${v.quota}"`);
  if (v.quota !== undefined && v['no-quota']) throw new UsageError('--quota and --no-quota cannot be combined');
  if (v['push-endpoint'] !== undefined && !/^https?:\/\//.test(v['push-endpoint'])) throw new UsageError(`--push-endpoint expects an http(s) URL, got "${v['push-endpoint']}"`);
  const email = v.account ?? 'me@example.com';
  if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new UsageError(`--account expects an email address, got "${email}"`);
  if ((v['client-id'] === undefined) !== (v['client-secret'] === undefined)) throw new UsageError('--client-id and --client-secret go together');
  const retentionHours = intFlag('history-retention-hours', v['history-retention-hours'], 1);
  const tokenTtl = intFlag('token-ttl', v['token-ttl'], 10);
  return {
    emulator: {
      port: intFlag('port', v.port, 0, 65535) ?? 8235,
      host: v.host ?? '127.0.0.1',
      seed: intFlag('seed', v.seed, 0) ?? 1,
      quota: v['no-quota'] ? false : { profile: (v.quota as 'legacy' | '2026' | undefined) ?? 'legacy' },
      push: {
        ...(v['push-endpoint'] ? { endpoint: v['push-endpoint'] } : {}),
        ...(v['push-audience'] ? { audience: v['push-audience'] } : {}),
      },
      ...(retentionHours !== undefined ? { historyRetentionMs: retentionHours * 3600_000 } : {}),
      ...(tokenTtl !== undefined ? { accessTokenTtlSeconds: tokenTtl } : {}),
      ...(v['client-id'] && v['client-secret'] ? { clients: [{ clientId: v['client-id'], clientSecret: v['client-secret'] }] } : {}),
    },
    account: { email, name: v.name ?? 'Emulated User' },
    messages: intFlag('messages', v.messages, 0, 2_000_000) ?? 0,
    spanDays: intFlag('span-days', v['span-days'], 1) ?? 30,
    mbox: v['import-mbox'] ?? [],
    eml: v['import-eml'] ?? [],
    json: v.json ?? false,
  };
}

async function main(): Promise<void> {
  let config: CliConfig | 'help';
  try {
    config = parseCli(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`gmail emulator: ${err.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (config === 'help') {
    console.log(USAGE);
    return;
  }
  const seed = config.emulator.seed ?? 1;
  const emulator = await startGmailEmulator({
    ...config.emulator,
    accounts: [{ ...config.account, ...(config.messages > 0 ? { seed: { count: config.messages, seed, spanDays: config.spanDays } } : {}) }],
  });
  for (const path of config.mbox) emulator.world.importMessages(config.account.email, { format: 'mbox', data: readFileSync(path) });
  for (const path of config.eml) emulator.world.importMessages(config.account.email, { format: 'eml', data: readFileSync(path) });
  const info = await emulator.control.info();
  const account = emulator.accounts[0];
  const mailbox = emulator.world.getAccount(config.account.email).mailbox;
  const details = {
    url: emulator.url,
    gmailRootUrl: info.gmailRootUrl,
    tokenUrl: info.tokenUrl,
    authUrl: info.authUrl,
    pemCertsUrl: info.pemCertsUrl,
    controlUrl: `${emulator.url}/__emulator/`,
    email: account?.email,
    clientId: account?.clientId,
    clientSecret: account?.clientSecret,
    refreshToken: account?.refreshToken,
    messages: mailbox.messagesTotal,
    historyId: String(mailbox.historyId),
    quota: info.quota.enabled ? info.quota.profile : 'off',
  };
  if (config.json) {
    console.log(JSON.stringify(details));
  } else {
    console.log(`Gmail emulator listening on ${details.url}
  Gmail API     google.gmail({ version: 'v1', auth, rootUrl: '${details.gmailRootUrl}' })
  token URL     ${details.tokenUrl}   (OAuth2Client endpoints.oauth2TokenUrl)
  consent URL   ${details.authUrl}   (endpoints.oauth2AuthBaseUrl)
  push certs    ${details.pemCertsUrl}   (endpoints.oauth2FederatedSignonPemCertsUrl)
  control API   ${details.controlUrl}
  account       ${details.email} (${details.messages} messages, historyId ${details.historyId})
  client id     ${details.clientId}
  client secret ${details.clientSecret}
  refresh token ${details.refreshToken}
  quota         ${details.quota}`);
  }
  const shutdown = () => {
    void emulator.close().then(() => process.exit(0));
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

if (isMainModule(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error('gmail emulator failed:', err);
    process.exit(1);
  });
}
