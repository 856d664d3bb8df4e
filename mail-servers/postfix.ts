// A private Postfix instance for one test run: config_directory, queue and data under `dir`, SMTP on
// 127.0.0.1 only. Three listeners: an MX-like port (no auth; mail from correspondents comes in here),
// submission with STARTTLS and submissions with implicit TLS (both SASL through Dovecot's auth socket).
// Mail for the test domains goes to Dovecot over LMTP; anything else is refused, so nothing leaves.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, chown, mkdir, utimes, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { spawnBoundToUs } from '../src/shared/bound-child.js';
import { waitForGreeting } from './greeting.js';

const run = promisify(execFile);

export interface PostfixOptions {
  dir: string;
  mxPort: number;
  submissionPort: number;
  submissionsPort: number;
  certFile: string;
  keyFile: string;
  /** The mailboxes Postfix accepts mail for; their domains are its (virtual) domains. */
  addresses: string[];
  lmtpSocket: string;
  authSocket: string;
  /** A policy service the submission listeners ask at the end of DATA (inet:host:port; policy.ts). */
  submissionPolicy?: string;
  log?: (line: string) => void;
}

export interface Postfix {
  version: string;
  configDirectory: string;
  outputTail(): string;
  /** How many messages Postfix holds (incoming, active, deferred, hold): 0 once all it took are delivered or bounced. */
  queuedMessages(): Promise<number>;
  stop(): Promise<void>;
}

export async function postfixVersion(): Promise<string> {
  const { stdout } = await run('postconf', ['-d', '-h', 'mail_version']);
  return stdout.trim();
}

export async function startPostfix(opts: PostfixOptions): Promise<Postfix> {
  const version = await postfixVersion();
  const configDirectory = join(opts.dir, 'postfix');
  const queue = join(configDirectory, 'spool');
  const data = join(configDirectory, 'data');
  await makeQueue(queue, data);
  const maillog = join(configDirectory, 'maillog');
  await writeFile(join(configDirectory, 'main.cf'), mainCf(opts, queue, data, maillog));
  await writeFile(join(configDirectory, 'master.cf'), masterCf(opts));
  // Postfix waits (in 300 ms steps, about 2 s) until a just-written main.cf is a little older.
  const past = new Date(Date.now() - 60_000);
  for (const file of ['main.cf', 'master.cf']) await utimes(join(configDirectory, file), past, past);
  // The master in the foreground (-d), under a shell that stops it when we die: the kernel's
  // parent-death signal (spawnBoundToUs) does not reach the master itself, which drops it when it
  // switches its effective uid. stop() signals the whole group, master and its children included.
  const master = `/usr/lib/postfix/sbin/master -c '${configDirectory}' -d & pid=$!; trap 'kill -TERM $pid' TERM INT HUP; wait $pid; wait $pid`;
  const child = spawnBoundToUs('/bin/sh', ['-c', master], { log: opts.log, stopGraceMs: 5_000 });
  const follow = opts.log ? spawnBoundToUs('tail', ['-F', '-n', '+1', maillog], { log: opts.log }) : undefined;
  const stop = async () => {
    await child.stop();
    await follow?.stop();
  };
  const outputTail = () => [child.outputTail(), lastLines(maillog, 40)].filter(Boolean).join('\n');
  try {
    await waitForGreeting('Postfix', { ...child, outputTail }, opts.mxPort, '220');
  } catch (err) {
    await stop();
    throw err;
  }
  // postqueue -j: one JSON object per queued message (Postfix 3.1+).
  const queuedMessages = async () =>
    (await run('postqueue', ['-c', configDirectory, '-j'])).stdout.split('\n').filter((line) => line.trim() !== '').length;
  return { version, configDirectory, outputTail, queuedMessages, stop };
}

function lastLines(file: string, n: number): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-n).join('\n');
  } catch {
    return '';
  }
}

/**
 * The queue tree as Postfix's postfix-files lays it out. Made here rather than by `postfix
 * set-permissions` + `postfix check`: those take 3-18 s and also re-own the system's Postfix files.
 */
async function makeQueue(queue: string, data: string): Promise<void> {
  const postfix = Number((await run('id', ['-u', 'postfix'])).stdout.trim());
  const postdrop = Number((await run('getent', ['group', 'postdrop'])).stdout.split(':')[2]);
  const dirs: [string, number, number, number][] = [
    [queue, 0, 0, 0o755],
    [join(queue, 'pid'), 0, 0, 0o755],
    [data, postfix, 0, 0o700],
    [join(queue, 'maildrop'), postfix, postdrop, 0o730],
    [join(queue, 'public'), postfix, postdrop, 0o710],
    ...[
      'active',
      'bounce',
      'corrupt',
      'defer',
      'deferred',
      'flush',
      'hold',
      'incoming',
      'private',
      'saved',
      'trace',
    ].map((name): [string, number, number, number] => [join(queue, name), postfix, 0, 0o700]),
  ];
  for (const [path, uid, gid, mode] of dirs) {
    await mkdir(path, { recursive: true });
    await chown(path, uid, gid);
    await chmod(path, mode);
  }
}

function mainCf(o: PostfixOptions, queue: string, data: string, maillog: string): string {
  const domains = [...new Set(o.addresses.map((a) => a.split('@')[1]))];
  const mailboxes = o.addresses.map((a) => `${a}=ok`).join(', ');
  const senders = o.addresses.map((a) => `${a}=${a}`).join(', ');
  const refuse = 'error:5.7.1 the test mail servers deliver to their own mailboxes only';
  return `# Written by mail-servers for one test run (run by ${userInfo().username}).
compatibility_level = 3.6
queue_directory = ${queue}
data_directory = ${data}
# A file: postlogd cannot open /dev/stdout when that is a socket (as Node's pipes to a child are).
maillog_file = ${maillog}
maillog_file_prefixes = ${o.dir}
myhostname = mx.${domains[0]}
mydomain = ${domains[0]}
myorigin = $mydomain
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtpd_peername_lookup = no
alias_maps =
alias_database =
virtual_mailbox_domains = ${domains.join(', ')}
virtual_mailbox_maps = inline:{ ${mailboxes} }
virtual_transport = lmtp:unix:${o.lmtpSocket}
local_transport = ${refuse}
relay_transport = ${refuse}
default_transport = ${refuse}
smtpd_relay_restrictions = permit_sasl_authenticated, reject_unauth_destination
# Mail from outside (the MX port, no login) is kept as it came, as a real MX keeps mail from the
# Internet: Postfix rewrites and completes headers (addresses re-written from its own parse, a Date
# or Message-ID added) only for clients listed here, and its default (permit_inet_interfaces) would
# count every client of this loopback-only server as local. Logged-in submission is still completed.
local_header_rewrite_clients = permit_sasl_authenticated
smtpd_recipient_restrictions = reject_unlisted_recipient
smtpd_tls_cert_file = ${o.certFile}
smtpd_tls_key_file = ${o.keyFile}
smtpd_tls_security_level = may
smtpd_tls_auth_only = yes
smtpd_sasl_type = dovecot
smtpd_sasl_path = ${o.authSocket}
smtpd_sasl_auth_enable = no
smtpd_sender_login_maps = inline:{ ${senders} }
# Tests wait for deliveries: retry a deferred one within seconds, not minutes.
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 4s
biff = no
`;
}

function masterCf(o: PostfixOptions): string {
  const authenticated = [
    '  -o smtpd_sasl_auth_enable=yes',
    '  -o smtpd_client_restrictions=permit_sasl_authenticated,reject',
    '  -o smtpd_sender_restrictions=reject_sender_login_mismatch',
    ...(o.submissionPolicy ? [`  -o smtpd_end_of_data_restrictions=check_policy_service,${o.submissionPolicy}`] : []),
  ];
  // No chroot anywhere (column 5 = n): the private queue directory has no chroot files in it.
  return [
    '# service type private unpriv chroot wakeup maxproc command',
    `127.0.0.1:${o.mxPort} inet n - n - - smtpd`,
    `127.0.0.1:${o.submissionPort} inet n - n - - smtpd`,
    '  -o syslog_name=postfix/submission',
    '  -o smtpd_tls_security_level=encrypt',
    ...authenticated,
    `127.0.0.1:${o.submissionsPort} inet n - n - - smtpd`,
    '  -o syslog_name=postfix/submissions',
    '  -o smtpd_tls_wrappermode=yes',
    ...authenticated,
    'pickup unix n - n 60 1 pickup',
    'cleanup unix n - n - 0 cleanup',
    'qmgr unix n - n 300 1 qmgr',
    'tlsmgr unix - - n 1000? 1 tlsmgr',
    'rewrite unix - - n - - trivial-rewrite',
    'bounce unix - - n - 0 bounce',
    'defer unix - - n - 0 bounce',
    'trace unix - - n - 0 bounce',
    'verify unix - - n - 1 verify',
    'flush unix n - n 1000? 0 flush',
    'proxymap unix - - n - - proxymap',
    'proxywrite unix - - n - 1 proxymap',
    'smtp unix - - n - - smtp',
    'relay unix - - n - - smtp',
    'showq unix n - n - - showq',
    'error unix - - n - - error',
    'retry unix - - n - - error',
    'discard unix - - n - - discard',
    'lmtp unix - - n - - lmtp',
    'anvil unix - - n - 1 anvil',
    'scache unix - - n - 1 scache',
    'postlog unix-dgram n - n - 1 postlogd',
    '',
  ].join('\n');
}
