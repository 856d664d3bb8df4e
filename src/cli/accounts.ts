// `npm run cli -- accounts <connect|list|disconnect|llm-resume|timezone|doctor>`.
//   connect [--login-hint you@example.com]  OAuth2 loopback consent in the browser; tokens sealed in
//                                           Postgres, labels created, cursor set, watch, sync started.
//   connect --imap --email ADDRESS [--imap-host HOST] [--imap-port 993] [--imap-tls MODE] [--smtp-host HOST]
//           [--smtp-port 587] [--smtp-tls MODE] [--user NAME] (--password-file FILE | --password-stdin) [--ca-file PEM]
//                                           an IMAP/SMTP mailbox with an app password: both servers
//                                           checked, the password sealed, the sync started. Without
//                                           --imap-host, the servers of a well-known provider of the
//                                           address's domain (Gmail, Fastmail, iCloud, Outlook.com, Yahoo).
//           ... --oauth-token-url URL --oauth-client-id ID [--oauth-client-secret-file FILE]
//           (--refresh-token-file FILE | --refresh-token-stdin)
//                                           the same with XOAUTH2: access tokens from the refresh
//                                           token (Microsoft 365, Outlook.com), the grant sealed.
//   list                                    every account with its status and its LLM's (paused says
//                                           why and what to do).
//   disconnect <account>                    watch stopped, grant revoked, tokens deleted, sync stopped;
//                                           threads wait, and connect resumes them.
//   llm-resume <account>                    the account's LLM, paused on a refused key or credits,
//                                           resumes; its waiting threads carry on.
//   timezone <account> [ZONE]               shows the account's time zone, or sets it (an IANA name).
//   doctor <account>                        checks the account's Gmail API set-up (grant, scopes, the
//                                           Gmail API enabled, the push topic and endpoint); one
//                                           sentence per problem and what to do; exit 1 on a problem.
import { parseArgs } from 'node:util';
import { TokenVault } from '../accounts/token-vault.js';
import { gmailDoctorSettingsFromConfig, gmailOAuthSettings, threadSettingsFromConfig, userScheduleSettingsFromConfig } from '../config/settings.js';
import type { Env } from '../config/env.js';
import { createPrismaClient, type PrismaClient } from '../db/client.js';
import { resolveDatabase } from '../db/resolve-database.js';
import { createLogger } from '../shared/log.js';
import { AccountConflictError, disconnectAccount, registerAccount, registerImapAccount, type RegisteredAccount } from '../sync/connect.js';
import { MailServerError } from '../imap/errors.js';
import type { ImapServers } from '../accounts/imap-accounts.js';
import type { TlsMode } from '../imap/contracts.js';
import { checkTokenUrl, type OAuthGrant } from '../imap/oauth-token.js';
import { wellKnownServers, type WellKnownServers } from '../imap/well-known-servers.js';
import { readFileSync } from 'node:fs';
import type { SyncTarget } from '../sync/notify.js';
import { connectClient } from '../temporal/client.js';
import type { Client } from '@temporalio/client';
import { prismaExecutor } from '../db/sql-executor.js';
import { listAgentSchedules } from '../schedules/schedule-store.js';
import { moveAccountSchedules } from '../schedules/user-schedules.js';
import { resolvePayloadKeys, resolveTokenKey } from '../temporal/encryption-keys.js';
import { createBreakerStore } from '../llm/breaker-store.js';
import { describePause } from '../llm/breaker.js';
import { resumeLlm } from '../thread/llm-resume.js';
import { findAccount, noSuchAccount, requireAccount } from '../operations/account-ref.js';
import { usageFailure, UsageError, withDatabase } from './command.js';
import { printTable } from './table.js';
import { accountTimeSettings, setAccountTimeZone } from '../accounts/time-settings.js';
import { describeLocal, TimeSpecError } from '../time/index.js';
import { moveRemindersToAccountZone } from './reminders.js';
import { GMAIL_SCOPES, runLoopbackConsent } from '../accounts/gmail-consent.js';
import { diagnoseGmailAccount, explainConnectFailure, GmailSetupError, scopesFinding, type DoctorFinding } from '../accounts/gmail-doctor.js';

const log = createLogger('cli');

export interface AccountsCliIo {
  out: (line: string) => void;
  /** Standard input, read whole (`--password-stdin`); default: the process's. */
  readStdin?: () => string;
  /** Shows the consent URL; default: print it for the user to open. */
  openUrl?: (url: string) => Promise<void> | void;
}

export interface AccountsCliDeps {
  cfg: Env;
  prisma: PrismaClient;
  /** For starting/resuming the account's sync; when absent, the fallback poll picks the account up. */
  sync?: SyncTarget;
}

/**
 * Consent, then the account registered. A set-up mistake (a scope left unticked, the Gmail API not
 * enabled, a topic Gmail may not publish to) is a GmailSetupError that says what to do.
 */
export async function connectCommand(deps: AccountsCliDeps, io: AccountsCliIo, loginHint?: string): Promise<RegisteredAccount> {
  const oauth = gmailOAuthSettings(deps.cfg);
  const tokens = await runLoopbackConsent({
    clientId: oauth.clientId,
    clientSecret: oauth.clientSecret,
    ...(deps.cfg.GOOGLE_OAUTH_AUTH_URL ? { authUrl: deps.cfg.GOOGLE_OAUTH_AUTH_URL } : {}),
    ...(deps.cfg.GOOGLE_OAUTH_TOKEN_URL ? { tokenUrl: deps.cfg.GOOGLE_OAUTH_TOKEN_URL } : {}),
    ...(loginHint ? { loginHint } : {}),
    openUrl: io.openUrl ?? ((url) => io.out(`Open this URL in your browser to connect Gmail:\n\n  ${url}\n`)),
  });
  // Google's consent lets the user untick scopes: such a grant would fail at its first label change.
  const scopes = tokens.scope ? scopesFinding(loginHint, tokens.scope, GMAIL_SCOPES) : undefined;
  if (scopes?.status === 'problem') throw new GmailSetupError(scopes);
  let account: RegisteredAccount;
  try {
    account = await registerAccount(
      {
        prisma: deps.prisma,
        vault: new TokenVault(await resolveTokenKey(deps.cfg)),
        oauth,
        labels: threadSettingsFromConfig(deps.cfg).labels,
        ...(deps.sync ? { sync: deps.sync } : {}),
        ...(deps.cfg.GMAIL_PUSH_TOPIC ? { pushTopic: deps.cfg.GMAIL_PUSH_TOPIC } : {}),
      },
      tokens,
    );
  } catch (err) {
    throw explainConnectFailure(err, { ...(loginHint ? { email: loginHint } : {}), ...(deps.cfg.GMAIL_PUSH_TOPIC ? { pushTopic: deps.cfg.GMAIL_PUSH_TOPIC } : {}) });
  }
  io.out(
    `${account.reconnected ? 'Reconnected' : 'Connected'} ${account.email} (account ${account.id}); sync cursor ${account.historyId}` +
      (account.watchExpiration ? `, Gmail watch until ${account.watchExpiration.toISOString()}` : ', no Gmail watch (GMAIL_PUSH_TOPIC unset)'),
  );
  return account;
}

export interface ImapConnectOptions {
  email: string;
  /** Without it, the servers of the provider that hosts the address's domain (src/imap/well-known-servers.ts). */
  imapHost?: string;
  imapPort?: number;
  /** Default by port: implicit on 993 and 465, STARTTLS elsewhere. */
  imapTls?: TlsMode;
  smtpHost?: string;
  smtpPort?: number;
  smtpTls?: TlsMode;
  user?: string;
  /** The app password, or (`oauth`) the OAuth grant whose access tokens log in with XOAUTH2. */
  password?: string;
  oauth?: OAuthGrant;
  /** Extra trust anchors (PEM) for a server whose certificate no public CA signed. */
  ca?: string;
}

/** 993 and 465 speak TLS from the first byte; any other port is upgraded with STARTTLS (which must succeed). */
const tlsFor = (port: number) => (port === 993 || port === 465 ? 'implicit' : 'starttls');

/**
 * The servers to connect: as given, or the well-known provider's for the address's domain (a port
 * or TLS mode given still applies). A UsageError when there is neither.
 */
export function imapServersOf(opts: ImapConnectOptions): { servers: ImapServers; known?: WellKnownServers } {
  const user = opts.user ?? opts.email;
  const trust = opts.ca ? { ca: opts.ca } : {};
  const known = opts.imapHost ? undefined : wellKnownServers(opts.email);
  if (!opts.imapHost && !known) {
    const domain = opts.email.slice(opts.email.lastIndexOf('@') + 1);
    throw new UsageError(`no IMAP server is known for ${JSON.stringify(domain.slice(0, 100))}: give --imap-host (and --smtp-host when mail is submitted elsewhere), as your provider's help pages name them`);
  }
  const imapPort = opts.imapPort ?? known?.imap.port ?? 993;
  const smtpPort = opts.smtpPort ?? known?.smtp.port ?? 587;
  const smtpTls = opts.smtpTls ?? (opts.smtpPort === undefined ? known?.smtp.tls : undefined) ?? tlsFor(smtpPort);
  const imapHost = opts.imapHost ?? known!.imap.host;
  const servers: ImapServers = {
    imap: { server: { host: imapHost, port: imapPort, tls: opts.imapTls ?? tlsFor(imapPort), ...trust }, user },
    smtp: { server: { host: opts.smtpHost ?? known?.smtp.host ?? imapHost, port: smtpPort, tls: smtpTls, ...trust }, user },
  };
  return known ? { servers, known } : { servers };
}

/** `accounts connect --imap`: the servers checked and the account registered (a MailServerError says what failed). */
export async function connectImapCommand(deps: AccountsCliDeps, io: AccountsCliIo, opts: ImapConnectOptions): Promise<RegisteredAccount> {
  const { servers, known } = imapServersOf(opts);
  if (known) {
    const at = (s: { host: string; port: number }) => `${s.host}:${s.port}`;
    io.out(`${known.provider}'s servers: IMAP ${at(servers.imap.server)}, SMTP ${at(servers.smtp.server)} (--imap-host and --smtp-host choose others).${known.note ? ` ${known.note}.` : ''}`);
  }
  const account = await registerImapAccount(
    { prisma: deps.prisma, vault: new TokenVault(await resolveTokenKey(deps.cfg)), ...(deps.sync ? { sync: deps.sync } : {}) },
    { address: opts.email, servers, secret: opts.oauth ? { oauth: opts.oauth } : { password: opts.password ?? '' } },
  );
  const caps = account.capabilities;
  io.out(
    `${account.reconnected ? 'Reconnected' : 'Connected'} ${account.email} over IMAP (account ${account.id}): ` +
      `${caps.idle ? 'changes pushed by IDLE' : 'no IDLE, changes polled'}, labels kept as ${caps.stateIn === 'keywords' ? 'IMAP keywords' : 'folders'}` +
      `${caps.qresync ? '' : ', no QRESYNC (deletions found by listing)'}.`,
  );
  return account;
}

export async function listCommand(deps: Pick<AccountsCliDeps, 'prisma'>, io: AccountsCliIo): Promise<void> {
  const rows = await deps.prisma.account.findMany({ orderBy: { createdAt: 'asc' } });
  if (rows.length === 0) {
    io.out('No accounts. Connect one with: npm run cli -- accounts connect');
    return;
  }
  const paused = new Map((await createBreakerStore(deps.prisma).listOpen()).map((b) => [b.accountId, b]));
  const table = rows.map((a) => [
    a.email,
    a.status,
    paused.has(a.id) ? `paused (${paused.get(a.id)!.reason})` : 'ok',
    a.historyId ?? '-',
    a.watchExpiration ? a.watchExpiration.toISOString() : '-',
    a.id,
  ]);
  printTable(io.out, ['EMAIL', 'STATUS', 'LLM', 'CURSOR', 'WATCH UNTIL', 'ID'], table);
  const stale = rows.filter((a) => a.status === 'needs_reauth');
  for (const a of stale) {
    io.out(
      a.provider === 'imap'
        ? `\n${a.email} needs_reauth: its mail server or OAuth provider refused the login (a changed password, a revoked grant); its sync is paused. Reconnect: npm run cli -- accounts connect --imap --email ${a.email} with its servers and the new password or refresh token`
        : `\n${a.email} needs_reauth: Google revoked the grant; its sync is paused. Reconnect: npm run cli -- accounts connect --login-hint ${a.email}`,
    );
  }
  for (const a of rows.filter((r) => r.status === 'disconnected')) {
    io.out(`\n${a.email} disconnected: nothing is read or written. Connect it again: npm run cli -- accounts connect --login-hint ${a.email}`);
  }
  for (const b of paused.values()) io.out(`\n${b.email} LLM paused: ${describePause(b, b.email)}`);
}

export async function llmResumeCommand(deps: AccountsCliDeps, io: AccountsCliIo, account: string): Promise<void> {
  const row = await requireAccount(deps.prisma, account);
  const done = await resumeLlm({ prisma: deps.prisma, ...(deps.sync ? { client: deps.sync.client } : {}) }, row.id);
  const was = done.before.state === 'open' ? `was paused (${done.before.reason})` : 'was not paused';
  const threads =
    done.signalled === undefined
      ? 'Temporal unreachable: waiting threads try again at their next recheck'
      : `${done.signalled} running thread${done.signalled === 1 ? '' : 's'} told to carry on`;
  io.out(`LLM resumed for ${row.email} (it ${was}); ${threads}. If the model still refuses, it pauses again.`);
}

export async function disconnectCommand(deps: AccountsCliDeps, io: AccountsCliIo, account: string): Promise<void> {
  const row = await findAccount(deps.prisma, account);
  if (!row) throw new UsageError(noSuchAccount(account));
  const done = await disconnectAccount(
    {
      prisma: deps.prisma,
      vault: new TokenVault(await resolveTokenKey(deps.cfg)),
      oauth: gmailOAuthSettings(deps.cfg),
      ...(deps.sync ? { sync: deps.sync } : {}),
    },
    row.id,
  );
  const warn = (ok: boolean, what: string) => (ok ? what : `${what} FAILED (see the log)`);
  io.out(
    `Disconnected ${done.email}: ${warn(done.watchStopped, 'push watch stopped')}, ${warn(done.grantRevoked, 'grant revoked at Google')}, ` +
      `tokens deleted${deps.sync ? `, ${done.syncStopped ? 'sync stopped' : 'no sync was running'}` : ' (Temporal unreachable: the sync stops at its next Gmail call)'}.`,
  );
  io.out(`Its threads and their drafts stay as they are. Connect it again with: npm run cli -- accounts connect --login-hint ${done.email}`);
}

/** Shows the account's time zone (its own or the default) and its local time now; with a zone, sets it first. */
export async function timezoneCommand(
  deps: Pick<AccountsCliDeps, 'cfg' | 'prisma'> & { temporal?: () => Promise<Client> },
  io: AccountsCliIo,
  account: string,
  zone?: string,
  now = new Date(),
): Promise<void> {
  const row = await requireAccount(deps.prisma, account);
  if (zone !== undefined) {
    let canonical: string;
    try {
      canonical = await setAccountTimeZone(deps.prisma, row.id, zone);
    } catch (err) {
      if (err instanceof TimeSpecError) throw new UsageError(err.message);
      throw err;
    }
    // The account's schedules (those without a zone of their own) move with it, local times kept.
    const db = prismaExecutor(deps.prisma);
    if (deps.temporal && (await listAgentSchedules(db, row.id)).some((s) => s.timeZone === null)) {
      const moved = await moveAccountSchedules(await deps.temporal(), db, row.id, canonical, userScheduleSettingsFromConfig(deps.cfg));
      io.out(`Moved ${moved.length} schedule(s) to ${canonical}: ${moved.map((m) => m.name).join(', ')}`);
    }
  }
  const own = (await deps.prisma.account.findUniqueOrThrow({ where: { id: row.id }, select: { timeZone: true } })).timeZone;
  const settings = (await accountTimeSettings(deps.prisma, row.id, deps.cfg))!;
  const source = own ? 'its own' : `none set: DEFAULT_TIME_ZONE`;
  io.out(`${zone !== undefined ? 'Set: ' : ''}${row.email} time zone ${settings.zone} (${source}); now ${describeLocal(now, settings.zone)}`);
  if (zone === undefined) return;
  // Reminders that follow the account's zone move with it (docs/time.md, Reminders).
  const moved = await moveRemindersToAccountZone(deps.cfg, deps.prisma, row.id);
  if (moved > 0) io.out(`${moved === 1 ? '1 reminder without a zone of its own now runs' : `${moved} reminders without a zone of their own now run`} in ${settings.zone}`);
}

const CHECK_NAMES: Record<DoctorFinding['check'], string> = {
  grant: 'OAuth grant',
  scopes: 'scopes',
  gmail_api: 'Gmail API',
  push_topic: 'push topic',
  push_endpoint: 'push endpoint',
};

/** A finding as the CLI prints it: status, check, what was found; below it, what to do. */
export function formatFinding(f: DoctorFinding): string[] {
  const head = `  ${(f.status === 'problem' ? 'PROBLEM' : f.status).padEnd(8)} ${CHECK_NAMES[f.check].padEnd(14)} ${f.found}`;
  return f.todo ? [head, `  ${' '.repeat(8)} ${' '.repeat(14)} → ${f.todo}`] : [head];
}

/** `accounts doctor <account>`: prints every finding; returns how many are problems. */
export async function doctorCommand(deps: Pick<AccountsCliDeps, 'cfg' | 'prisma'>, io: AccountsCliIo, ref: string): Promise<number> {
  const row = await requireAccount(deps.prisma, ref);
  const report = await diagnoseGmailAccount(
    { prisma: deps.prisma, vault: new TokenVault(await resolveTokenKey(deps.cfg)), settings: gmailDoctorSettingsFromConfig(deps.cfg) },
    row.id,
  );
  io.out(`Gmail set-up of ${report.email} (account ${report.accountId}):`);
  for (const finding of report.findings) for (const line of formatFinding(finding)) io.out(line);
  const problems = report.findings.filter((f) => f.status === 'problem').length;
  io.out(problems === 0 ? 'No problems found.' : `${problems} problem${problems === 1 ? '' : 's'} found; docs/gmail-setup.md walks the set-up step by step.`);
  return problems;
}

export const USAGE =
  'usage: npm run cli -- accounts connect [--login-hint EMAIL] | accounts connect --imap --email ADDRESS [--imap-host HOST] [--imap-port 993] [--imap-tls implicit|starttls] [--smtp-host HOST] [--smtp-port 587] [--smtp-tls implicit|starttls] [--user NAME] (--password-file FILE | --password-stdin | --oauth-token-url URL --oauth-client-id ID [--oauth-client-secret-file FILE] (--refresh-token-file FILE | --refresh-token-stdin)) [--ca-file PEM] | accounts list | accounts disconnect <EMAIL or id> | accounts llm-resume <EMAIL or id> | accounts timezone <EMAIL or id> [ZONE] | accounts doctor <EMAIL or id>';

/** Entry for src/cli/main.ts. Returns the exit code. */
export async function runAccountsCli(cfg: Env, argv: string[], io: AccountsCliIo = { out: (l) => console.log(l) }): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      'login-hint': { type: 'string' },
      imap: { type: 'boolean' },
      email: { type: 'string' },
      'imap-host': { type: 'string' },
      'imap-port': { type: 'string' },
      'smtp-host': { type: 'string' },
      'smtp-port': { type: 'string' },
      'imap-tls': { type: 'string' },
      'smtp-tls': { type: 'string' },
      user: { type: 'string' },
      'password-file': { type: 'string' },
      'password-stdin': { type: 'boolean' },
      'ca-file': { type: 'string' },
      'oauth-token-url': { type: 'string' },
      'oauth-client-id': { type: 'string' },
      'oauth-client-secret-file': { type: 'string' },
      'refresh-token-file': { type: 'string' },
      'refresh-token-stdin': { type: 'boolean' },
    },
    allowPositionals: true,
  });
  if (sub !== 'connect' && sub !== 'list' && sub !== 'disconnect' && sub !== 'llm-resume' && sub !== 'timezone' && sub !== 'doctor') {
    io.out(USAGE);
    return 2;
  }
  if (sub === 'doctor') {
    if (positionals.length !== 1) return usageFailure(io, 'accounts', 'doctor needs one account (its email or id)', USAGE);
    let problems = 0;
    const code = await withDatabase(cfg, io, { name: 'accounts', usage: USAGE }, async (prisma) => {
      problems = await doctorCommand({ cfg, prisma }, io, positionals[0]!);
    });
    return code !== 0 ? code : problems > 0 ? 1 : 0;
  }
  if (sub === 'timezone') {
    if (positionals.length < 1 || positionals.length > 2) return usageFailure(io, 'accounts', 'timezone needs one account (its email or id) and, to set it, a zone such as Europe/Berlin', USAGE);
    let client: Client | undefined;
    const temporal = async () => (client ??= await connectClient(cfg, await resolvePayloadKeys(cfg)));
    try {
      return await withDatabase(cfg, io, { name: 'accounts', usage: USAGE }, (prisma) => timezoneCommand({ cfg, prisma, temporal }, io, positionals[0]!, positionals[1]));
    } finally {
      await client?.connection.close();
    }
  }
  if ((sub === 'disconnect' || sub === 'llm-resume') && positionals.length !== 1) {
    return usageFailure(io, 'accounts', `${sub} needs one account (its email or id)`, USAGE);
  }
  const database = await resolveDatabase(cfg, log);
  const prisma = createPrismaClient(database.url);
  try {
    if (sub === 'list') {
      await listCommand({ prisma }, io);
      return 0;
    }
    let client;
    try {
      client = await connectClient(cfg, await resolvePayloadKeys(cfg));
    } catch (err) {
      const then = {
        connect: "the fallback poll will start this account's sync",
        disconnect: 'the sync stops at its next Gmail call',
        'llm-resume': 'waiting threads try the LLM again at their next recheck',
      }[sub];
      log.warn(`Temporal unreachable (${err instanceof Error ? err.message : String(err)}): ${then}`);
    }
    try {
      const deps = { cfg, prisma, ...(client ? { sync: { client, taskQueue: cfg.TEMPORAL_TASK_QUEUE } } : {}) };
      if (sub === 'disconnect') await disconnectCommand(deps, io, positionals[0]!);
      else if (sub === 'llm-resume') await llmResumeCommand(deps, io, positionals[0]!);
      else if (values.imap) await connectImapCommand(deps, io, imapOptions(values, io.readStdin));
      else await connectCommand(deps, io, values['login-hint']);
    } catch (err) {
      if (err instanceof MailServerError || err instanceof AccountConflictError) {
        io.out(`durable-inbox accounts ${sub}: ${err.message}`);
        return 1;
      }
      if (err instanceof GmailSetupError) {
        io.out(`durable-inbox accounts ${sub}: ${err.finding.found}`);
        if (err.finding.todo) io.out(`  → ${err.finding.todo}`);
        return 1;
      }
      if (!(err instanceof UsageError)) throw err;
      return usageFailure(io, 'accounts', err.message, USAGE);
    } finally {
      await client?.connection.close();
    }
    return 0;
  } finally {
    await prisma.$disconnect();
    await database.stop();
  }
}

const port = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new UsageError(`--${name} must be a port number (1-65535), not ${JSON.stringify(value.slice(0, 20))}`);
  return n;
};

const tlsMode = (name: string, value: string | undefined): TlsMode | undefined => {
  if (value === undefined || value === 'implicit' || value === 'starttls') return value;
  throw new UsageError(`--${name} is implicit (TLS from the first byte) or starttls, not ${JSON.stringify(value.slice(0, 20))}`);
};

/** The connect --imap options, or a UsageError naming what is missing. The password never comes on the command line. */
function imapOptions(values: Record<string, string | boolean | undefined>, readStdin: () => string = () => readFileSync(0, 'utf8')): ImapConnectOptions {
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const email = text('email');
  const imapHost = text('imap-host');
  if (!email) throw new UsageError('connect --imap needs --email (and --imap-host unless the address is at a well-known provider)');
  const oauth = oauthGrant(values, readStdin);
  const file = text('password-file');
  if (!oauth && !file && !values['password-stdin']) throw new UsageError('connect --imap needs the app password (--password-file FILE or --password-stdin) or an OAuth grant (--oauth-token-url, --oauth-client-id, --refresh-token-file FILE or --refresh-token-stdin)');
  if (oauth && (file || values['password-stdin'])) throw new UsageError('connect --imap takes an app password or an OAuth refresh token, not both');
  const password = oauth ? undefined : (file ? readFileSync(file, 'utf8') : readStdin()).replace(/\r?\n$/, '');
  if (password === '') throw new UsageError('the app password is empty');
  const ca = text('ca-file');
  const imapPort = port('imap-port', text('imap-port'));
  const smtpPort = port('smtp-port', text('smtp-port'));
  const smtpHost = text('smtp-host');
  const imapTls = tlsMode('imap-tls', text('imap-tls'));
  const smtpTls = tlsMode('smtp-tls', text('smtp-tls'));
  const user = text('user');
  return {
    email,
    ...(imapHost ? { imapHost } : {}),
    ...(oauth ? { oauth } : { password: password ?? '' }),
    ...(imapPort ? { imapPort } : {}),
    ...(smtpPort ? { smtpPort } : {}),
    ...(smtpHost ? { smtpHost } : {}),
    ...(imapTls ? { imapTls } : {}),
    ...(smtpTls ? { smtpTls } : {}),
    ...(user ? { user } : {}),
    ...(ca ? { ca: readFileSync(ca, 'utf8') } : {}),
  };
}

/** The --oauth-* options as a grant (undefined when none is given); secrets from files or stdin, never the command line. */
function oauthGrant(values: Record<string, string | boolean | undefined>, readStdin: () => string): OAuthGrant | undefined {
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const tokenUrl = text('oauth-token-url');
  const clientId = text('oauth-client-id');
  const secretFile = text('oauth-client-secret-file');
  const tokenFile = text('refresh-token-file');
  const tokenStdin = values['refresh-token-stdin'] === true;
  if (!tokenUrl && !clientId && !secretFile && !tokenFile && !tokenStdin) return undefined;
  if (!tokenUrl || !clientId || (!tokenFile && !tokenStdin)) {
    throw new UsageError('connect --imap with OAuth needs --oauth-token-url, --oauth-client-id and the refresh token (--refresh-token-file FILE or --refresh-token-stdin)');
  }
  try {
    checkTokenUrl(tokenUrl);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const refreshToken = (tokenFile ? readFileSync(tokenFile, 'utf8') : readStdin()).trim();
  if (!refreshToken) throw new UsageError('the refresh token is empty');
  const clientSecret = secretFile ? readFileSync(secretFile, 'utf8').trim() : undefined;
  return { tokenUrl, clientId, refreshToken, ...(clientSecret ? { clientSecret } : {}) };
}
