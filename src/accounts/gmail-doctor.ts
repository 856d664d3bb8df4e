// `accounts doctor`: is one account's Gmail API set-up right? Each check runs through the official
// clients, as the product does (createGmailClient: google-auth-library's token refresh, googleapis'
// Gmail calls), and ends in a finding: what was found in one sentence and, when something is to be
// done, what in one more. The checks: the grant (a refresh; invalid_grant about a week after a
// connect means an app left in Testing), its scopes (the token answer's `scope`), the Gmail API
// (users.getProfile: 403 accessNotConfigured when it is not enabled in the client's project), the
// push topic (users.watch: 403 when gmail-api-push@system.gserviceaccount.com may not publish) and
// the push endpoint (the settings, and whether pushes arrive). The same sentences explain a failed
// `accounts connect`. Settings come as arguments: only the composition floor reads the environment.
import type { PrismaClient } from '../db/client.js';
import { createGmailClient } from '../gmail/client.js';
import { GmailAuthError, GmailError, GmailNetworkError, GmailRateLimitError, mapGmailError } from '../gmail/errors.js';
import type { GmailOAuthSettings } from './gmail-accounts.js';
import { GMAIL_SCOPES } from './gmail-consent.js';
import type { TokenVault } from './token-vault.js';

export type DoctorCheck = 'grant' | 'scopes' | 'gmail_api' | 'push_topic' | 'push_endpoint';

/** `problem`: something to fix (the command exits non-zero); `note`: works, with a consequence worth knowing. */
export type FindingStatus = 'ok' | 'problem' | 'note' | 'skipped';

export interface DoctorFinding {
  check: DoctorCheck;
  status: FindingStatus;
  /** One sentence: what was found. */
  found: string;
  /** One sentence: what to do (problems and notes). */
  todo?: string;
}

export interface GmailDoctorSettings {
  oauth: GmailOAuthSettings;
  /** What the grant must include (default: the scopes `accounts connect` asks for). */
  requiredScopes?: readonly string[];
  /** Gmail push; absent when no topic is configured (GMAIL_PUSH_TOPIC unset). */
  push?: {
    /** users.watch's topic, projects/<p>/topics/<t>. */
    topic: string;
    /** This app serves POST /gmail/push (PUSH_AUDIENCE and PUSH_SERVICE_ACCOUNT_EMAIL set). */
    served: boolean;
    /** The URL the push subscription must reach (PUBLIC_BASE_URL + /gmail/push); absent when PUBLIC_BASE_URL is unset. */
    endpoint?: string;
  };
  /** The fallback poll's interval (SYNC_POLL_EVERY): the sync's delay without push. */
  pollEveryMs: number;
}

export interface DoctorReport {
  accountId: string;
  email: string;
  findings: DoctorFinding[];
}

/** Gmail's push service account, which must be a Publisher on the topic. */
export const GMAIL_PUSH_PUBLISHER = 'gmail-api-push@system.gserviceaccount.com';

/** How long the refresh tokens of an External OAuth app left in Testing live (Google's OAuth 2.0 docs). */
export const TESTING_REFRESH_TOKEN_TTL_MS = 7 * 24 * 3600_000;

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const MAIL_SCOPE = 'https://mail.google.com/';
const SCOPE_PREFIX = 'https://www.googleapis.com/auth/';

/** A set-up mistake found while connecting: the finding says what and what to do. */
export class GmailSetupError extends Error {
  constructor(readonly finding: DoctorFinding) {
    super(finding.found);
    this.name = 'GmailSetupError';
  }
}

const connectAgain = (email?: string) => `npm run cli -- accounts connect${email ? ` --login-hint ${email}` : ''}`;

/** Runs every check for the account; never throws for what Google answers (that is a finding). */
export async function diagnoseGmailAccount(
  deps: { prisma: PrismaClient; vault: TokenVault; settings: GmailDoctorSettings; now?: () => Date },
  accountId: string,
): Promise<DoctorReport> {
  const { prisma, vault, settings } = deps;
  const now = deps.now ?? (() => new Date());
  let account = await prisma.account.findUniqueOrThrow({ where: { id: accountId } });
  const findings: DoctorFinding[] = [];
  const report = { accountId, email: account.email, findings };
  const skip = (check: DoctorCheck, why: string) => findings.push({ check, status: 'skipped', found: `Not checked: ${why}.` });
  const endpoint = () => findings.push(pushEndpointFinding(settings, account, now()));

  if (!account.encryptedTokens) {
    findings.push({
      check: 'grant',
      status: 'problem',
      found: `${account.email} is ${account.status}: there is no grant to check.`,
      todo: `Connect it: ${connectAgain(account.email)}.`,
    });
    for (const check of ['scopes', 'gmail_api', 'push_topic'] as const) skip(check, 'the account holds no grant');
    endpoint();
    return report;
  }

  const tokens = vault.open(account.encryptedTokens);
  // Only the refresh token: the first call refreshes, so the grant itself is what is checked.
  const { gmail, auth } = createGmailClient({ ...settings.oauth, credentials: { refresh_token: tokens.refresh_token } });

  try {
    await auth.getAccessToken();
  } catch (err) {
    findings.push(grantFailureFinding(err, { email: account.email, connectedAt: account.connectedAt, lastWorkedAt: account.lastHistoryAt, now: now() }));
    for (const check of ['scopes', 'gmail_api', 'push_topic'] as const) skip(check, 'Google refused the grant');
    endpoint();
    return report;
  }
  findings.push({ check: 'grant', status: 'ok', found: `Google refreshes the grant of ${account.email} (connected ${ago(now().getTime() - account.connectedAt.getTime())} ago).` });

  const granted = auth.credentials.scope;
  findings.push(
    granted === undefined || granted === null
      ? { check: 'scopes', status: 'skipped', found: 'Not checked: Google did not list the granted scopes.' }
      : scopesFinding(account.email, granted, settings.requiredScopes ?? GMAIL_SCOPES),
  );

  let apiWorks = false;
  try {
    const { data } = await gmail.users.getProfile({ userId: 'me' });
    apiWorks = true;
    findings.push({ check: 'gmail_api', status: 'ok', found: `The Gmail API answers for ${data.emailAddress ?? account.email} (${data.messagesTotal ?? 0} messages).` });
  } catch (err) {
    findings.push(apiFailureFinding(err, account.email));
  }

  if (!settings.push) {
    skip('push_topic', 'no Pub/Sub topic is configured (GMAIL_PUSH_TOPIC unset)');
  } else if (!apiWorks) {
    skip('push_topic', 'the Gmail API does not answer');
  } else {
    const topic = settings.push.topic;
    try {
      // The same watch `accounts connect` and the daily renewal set up: checking it renews it.
      const { data } = await gmail.users.watch({ userId: 'me', requestBody: { topicName: topic } });
      const watchExpiration = new Date(Number(data.expiration ?? 0));
      account = await prisma.account.update({ where: { id: account.id }, data: { watchExpiration } });
      findings.push({ check: 'push_topic', status: 'ok', found: `Gmail publishes ${account.email}'s changes to ${topic} (watch renewed until ${watchExpiration.toISOString()}).` });
    } catch (err) {
      findings.push(watchFailureFinding(err, topic));
    }
  }
  endpoint();
  return report;
}

/** The grant refused at the token endpoint: an app in Testing (about 7 days after the connect), revoked, or a wrong client. */
export function grantFailureFinding(
  err: unknown,
  ctx: { email: string; connectedAt: Date; lastWorkedAt?: Date | null; now: Date },
): DoctorFinding {
  const mapped = mapGmailError(err, { operation: 'token refresh' });
  if (mapped instanceof GmailAuthError && mapped.reason === 'invalid_grant') {
    const age = ctx.now.getTime() - ctx.connectedAt.getTime();
    if (expiredInTesting(age, ctx.connectedAt, ctx.lastWorkedAt)) {
      return {
        check: 'grant',
        status: 'problem',
        found:
          `Google refused ${ctx.email}'s grant (invalid_grant) ${ago(age)} after it was connected: the OAuth app is in Testing, ` +
          'where Google expires refresh tokens 7 days after the consent.',
        todo:
          'Publish the app (Google Auth Platform → Audience → Publish app: In production; unverified is fine for your own accounts), ' +
          `then connect again: ${connectAgain(ctx.email)}.`,
      };
    }
    return {
      check: 'grant',
      status: 'problem',
      found:
        `Google refused ${ctx.email}'s grant (invalid_grant: Token has been expired or revoked.) ${ago(age)} after it was connected: ` +
        "the app's access was removed in the Google Account, its password changed, or a newer grant replaced it.",
      todo: `Connect it again: ${connectAgain(ctx.email)}.`,
    };
  }
  if (mapped instanceof GmailAuthError && ['invalid_client', 'unauthorized_client', 'deleted_client'].includes(mapped.reason ?? '')) {
    return {
      check: 'grant',
      status: 'problem',
      found: `Google does not accept the OAuth client (${mapped.reason}): GOOGLE_CLIENT_ID or GOOGLE_CLIENT_SECRET is wrong, or the client was deleted.`,
      todo: "Copy the Desktop client's id and secret from Google Auth Platform → Clients into GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET.",
    };
  }
  return unreachable('grant', mapped, "Google's token endpoint");
}

/**
 * An app in Testing loses its refresh tokens 7 days after the consent: invalid_grant then, and not
 * before. A grant that demonstrably worked well past those 7 days (the sync read the mailbox's
 * history later) was not one of those.
 */
function expiredInTesting(ageMs: number, connectedAt: Date, lastWorkedAt: Date | null | undefined): boolean {
  if (ageMs < TESTING_REFRESH_TOKEN_TTL_MS - 10 * 60_000) return false;
  return !lastWorkedAt || lastWorkedAt.getTime() <= connectedAt.getTime() + TESTING_REFRESH_TOKEN_TTL_MS + HOUR;
}

/** The scopes the grant lacks (https://mail.google.com/ covers them all). */
export function missingScopes(granted: string, required: readonly string[]): string[] {
  const have = new Set(granted.split(/\s+/).filter(Boolean));
  if (have.has(MAIL_SCOPE)) return [];
  return required.filter((s) => !have.has(s));
}

/** `email` unknown (a consent before the mailbox was read): the sentence names no address. */
export function scopesFinding(email: string | undefined, granted: string, required: readonly string[]): DoctorFinding {
  const missing = missingScopes(granted, required);
  if (missing.length === 0) return { check: 'scopes', status: 'ok', found: `The grant includes every scope the assistant needs (${required.map(shortScope).join(', ')}).` };
  const names = missing.map(shortScope).join(' and ');
  return {
    check: 'scopes',
    status: 'problem',
    found: `${email ? `${email}'s grant` : 'The grant'} lacks ${names} (left unticked on Google's consent screen), so Gmail refuses the calls that need ${missing.length === 1 ? 'it' : 'them'} (403 insufficientPermissions).`,
    todo: `Connect again and leave every box ticked on Google's consent screen: ${connectAgain(email)}.`,
  };
}

/** A Gmail call refused: the Gmail API not enabled in the project, a missing scope, or something passing. */
export function apiFailureFinding(err: unknown, email: string): DoctorFinding {
  return knownApiFailure(err, email) ?? unreachable('gmail_api', mapGmailError(err, { operation: 'users.getProfile' }), 'The Gmail API');
}

function knownApiFailure(err: unknown, email: string): DoctorFinding | undefined {
  const mapped = mapGmailError(err, { operation: 'users.getProfile' });
  if (mapped.reasons.includes('accessNotConfigured') || mapped.reasons.includes('SERVICE_DISABLED')) {
    const project = projectOf(err);
    const where = project ? `Google Cloud project ${project}` : "the OAuth client's Google Cloud project";
    const url = project
      ? `https://console.developers.google.com/apis/api/gmail.googleapis.com/overview?project=${project}`
      : 'https://console.cloud.google.com/apis/library/gmail.googleapis.com';
    return {
      check: 'gmail_api',
      status: 'problem',
      found: `The Gmail API is not enabled in ${where} (403 accessNotConfigured), so every Gmail call for ${email} is refused.`,
      todo: `Enable it at ${url}, wait a few minutes, and run accounts doctor again.`,
    };
  }
  if (mapped.reasons.includes('insufficientPermissions') || mapped.reasons.includes('ACCESS_TOKEN_SCOPE_INSUFFICIENT')) {
    return {
      check: 'gmail_api',
      status: 'problem',
      found: `Gmail refuses ${email}'s calls for missing scopes (403 insufficientPermissions).`,
      todo: `Connect again and leave every box ticked on Google's consent screen: ${connectAgain(email)}.`,
    };
  }
  return undefined;
}

/** users.watch refused: the publisher grant, the topic's project, a topic that does not exist. */
export function watchFailureFinding(err: unknown, topic: string): DoctorFinding {
  return knownWatchFailure(err, topic) ?? unreachable('push_topic', mapGmailError(err, { operation: 'users.watch' }), 'users.watch');
}

function knownWatchFailure(err: unknown, topic: string): DoctorFinding | undefined {
  const mapped = mapGmailError(err, { operation: 'users.watch' });
  const message = googleMessage(err);
  if (mapped.status === 403 && (/sending test message to Cloud PubSub/i.test(message) || mapped.reason === 'forbidden')) {
    return {
      check: 'push_topic',
      status: 'problem',
      found: `Gmail may not publish to ${topic}: ${GMAIL_PUSH_PUBLISHER} is not a Publisher on it (users.watch 403 "User not authorized to perform this action.").`,
      todo: `Grant it: gcloud pubsub topics add-iam-policy-binding ${topic} --member=serviceAccount:${GMAIL_PUSH_PUBLISHER} --role=roles/pubsub.publisher`,
    };
  }
  if (mapped.status === 400 && /topicName/i.test(message)) {
    return {
      check: 'push_topic',
      status: 'problem',
      found: `Gmail refuses the topic ${topic} ("${message}"): it must be a topic of the same Google Cloud project as the OAuth client.`,
      todo: "Create the topic in the OAuth client's project and set GMAIL_PUSH_TOPIC to projects/<that project id>/topics/<name>.",
    };
  }
  if (mapped.status === 404) {
    return {
      check: 'push_topic',
      status: 'problem',
      found: `Gmail cannot find the topic ${topic} (users.watch 404).`,
      todo: `Create it (gcloud pubsub topics create ${topic}) and grant ${GMAIL_PUSH_PUBLISHER} the Publisher role on it.`,
    };
  }
  return undefined;
}

/** Whether Pub/Sub can deliver to this app at all, and whether pushes arrive. */
export function pushEndpointFinding(
  settings: Pick<GmailDoctorSettings, 'push' | 'pollEveryMs'>,
  account: { email: string; watchExpiration: Date | null; lastPushAt: Date | null; lastHistoryAt: Date | null },
  now: Date,
): DoctorFinding {
  const poll = describeInterval(settings.pollEveryMs);
  const carried = `so the fallback poll every ${poll} carries the sync and new mail waits up to ${poll}`;
  const push = settings.push;
  if (!push) {
    return {
      check: 'push_endpoint',
      status: 'note',
      found: `No Gmail push (GMAIL_PUSH_TOPIC unset), ${carried}.`,
      todo: 'Fine on a laptop; for mail within seconds, give the app a public HTTPS address and set up Pub/Sub push (docs/gmail-setup.md, step 7).',
    };
  }
  if (!push.served) {
    return {
      check: 'push_endpoint',
      status: 'problem',
      found: `Gmail publishes to ${push.topic}, but this app serves no POST /gmail/push (PUSH_AUDIENCE or PUSH_SERVICE_ACCOUNT_EMAIL unset), ${carried}.`,
      todo: "Set PUSH_AUDIENCE and PUSH_SERVICE_ACCOUNT_EMAIL to the push subscription's audience and service account (docs/gmail-setup.md, step 7).",
    };
  }
  const unreachableWhy = push.endpoint ? notPublic(push.endpoint) : 'PUBLIC_BASE_URL is unset (the app is only on its loopback address)';
  if (unreachableWhy) {
    return {
      check: 'push_endpoint',
      status: 'problem',
      found: `Pub/Sub cannot push to ${push.endpoint ?? 'this app'}: ${unreachableWhy}, ${carried}.`,
      todo: 'Serve the app at a public HTTPS address (a reverse proxy or a tunnel), set PUBLIC_BASE_URL to it and point the push subscription at PUBLIC_BASE_URL/gmail/push.',
    };
  }
  const watching = account.watchExpiration !== null && account.watchExpiration.getTime() > now.getTime();
  const silent =
    watching && account.lastHistoryAt !== null && account.lastHistoryAt.getTime() > (account.lastPushAt?.getTime() ?? -Infinity) + settings.pollEveryMs;
  if (silent) {
    return {
      check: 'push_endpoint',
      status: 'problem',
      found:
        `Mail reached ${account.email} (last change ${account.lastHistoryAt!.toISOString()}) but no push has arrived ` +
        `${account.lastPushAt ? `since ${account.lastPushAt.toISOString()}` : 'ever'}, ${carried}.`,
      todo: `Check that the push subscription of ${push.topic} points at ${push.endpoint} with the audience PUSH_AUDIENCE names (gcloud pubsub subscriptions describe <subscription>).`,
    };
  }
  return {
    check: 'push_endpoint',
    status: 'ok',
    found: `Pub/Sub can push to ${push.endpoint} (last push ${account.lastPushAt ? account.lastPushAt.toISOString() : 'none yet'}).`,
  };
}

/**
 * Why `accounts connect` failed, when it is a set-up mistake (the Gmail API off, a scope unticked,
 * the topic's publisher grant): a GmailSetupError; anything else as it was.
 */
export function explainConnectFailure(err: unknown, ctx: { email?: string; pushTopic?: string }): unknown {
  if (!(err instanceof GmailError)) return err;
  const finding =
    err.operation === 'users.watch' && ctx.pushTopic ? knownWatchFailure(err, ctx.pushTopic) : knownApiFailure(err, ctx.email ?? 'the account');
  return finding ? new GmailSetupError(finding) : err;
}

/** A failure that is not a set-up mistake we know: Google's own words, and try again. */
function unreachable(check: DoctorCheck, err: GmailError, what: string): DoctorFinding {
  if (err instanceof GmailNetworkError) {
    return { check, status: 'problem', found: `${what} did not answer (${err.code ?? 'no response'}).`, todo: 'Check the network and run accounts doctor again.' };
  }
  if (err instanceof GmailRateLimitError) {
    return { check, status: 'note', found: `${what} is rate-limiting this account right now (${err.reason ?? err.status}).`, todo: 'Run accounts doctor again in a minute.' };
  }
  const detail = err.message.replace(/^Gmail [^:]+ failed: /, '');
  return { check, status: 'problem', found: `${what} failed: ${detail.replace(/\.?$/, '.')}`, todo: 'Run accounts doctor again; if it stays, see docs/gmail-setup.md.' };
}

/** Google's error message: unabridged from a googleapis error, else what a mapped GmailError kept of it. */
function googleMessage(err: unknown): string {
  const data = (err as { response?: { data?: unknown } } | null)?.response?.data as { error?: { message?: unknown } } | undefined;
  if (typeof data?.error?.message === 'string') return data.error.message;
  return err instanceof Error ? err.message.replace(/^Gmail .+? failed: HTTP \d+(?: \S+)?: /, '') : '';
}

/** The consumer project of an accessNotConfigured answer: ErrorInfo's metadata, else the message. */
function projectOf(err: unknown): string | undefined {
  const data = (err as { response?: { data?: unknown } } | null)?.response?.data as { error?: { details?: unknown } } | undefined;
  const details = Array.isArray(data?.error?.details) ? (data.error.details as Array<{ metadata?: { consumer?: unknown } }>) : [];
  for (const d of details) {
    const consumer = d?.metadata?.consumer;
    if (typeof consumer === 'string' && consumer.startsWith('projects/')) return consumer.slice('projects/'.length);
  }
  const message = googleMessage(err);
  return /project (\S+) before or it is disabled/.exec(message)?.[1];
}

/** Why Pub/Sub cannot reach a URL, or undefined when it can (a public HTTPS address). */
function notPublic(endpoint: string): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return `${endpoint} is not a URL`;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host === '::1' || host === '0.0.0.0' || /^127\./.test(host)) return 'it is a loopback address';
  if (/^10\./.test(host) || /^192\.168\./.test(host) || /^172\.(1[6-9]|2\d|3[01])\./.test(host) || /^169\.254\./.test(host) || /^f[cd][0-9a-f]{2}:/.test(host) || host.endsWith('.local') || host.endsWith('.internal')) {
    return 'it is a private address';
  }
  if (url.protocol !== 'https:') return 'Pub/Sub pushes only to HTTPS addresses';
  return undefined;
}

function shortScope(scope: string): string {
  return scope.startsWith(SCOPE_PREFIX) ? scope.slice(SCOPE_PREFIX.length) : scope;
}

/** "15 minutes", "1 hour", "90 seconds". */
export function describeInterval(ms: number): string {
  const unit = (n: number, name: string) => `${n} ${name}${n === 1 ? '' : 's'}`;
  if (ms % HOUR === 0) return unit(ms / HOUR, 'hour');
  if (ms % 60_000 === 0) return unit(ms / 60_000, 'minute');
  return unit(Math.round(ms / 1000), 'second');
}

/** "3 hours", "6.9 days", "12 days". */
function ago(ms: number): string {
  if (ms < DAY) {
    const hours = Math.max(0, Math.round(ms / HOUR));
    return `${hours} hour${hours === 1 ? '' : 's'}`;
  }
  const days = ms / DAY;
  return `${days < 10 ? days.toFixed(1) : Math.round(days)} days`;
}
