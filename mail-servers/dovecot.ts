// A private Dovecot for one test run: its own config, sockets, state and mail under `dir`, IMAP on
// 127.0.0.1 only (STARTTLS port and implicit-TLS port), LMTP and the SASL auth socket for Postfix as
// unix sockets in `dir/run`. Debian 12 ships Dovecot 2.3, Debian 13 Dovecot 2.4, whose config syntax
// differs: the config is written for the version installed.
import { execFile } from 'node:child_process';
import { chown, mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { spawnBoundToUs, type BoundChild } from '../src/shared/bound-child.js';
import { waitForGreeting } from './greeting.js';

const run = promisify(execFile);

/** Mail files belong to this uid/gid; Dovecot refuses root, and it need not exist in /etc/passwd. */
export const MAIL_UID = 5000;

export interface MailAccount {
  address: string;
  password: string;
}

export interface DovecotOptions {
  dir: string;
  imapPort: number;
  imapsPort: number;
  certFile: string;
  keyFile: string;
  accounts: MailAccount[];
  /** Replaces the advertised CAPABILITY list (Dovecot's imap_capability), e.g. to leave CONDSTORE out. */
  imapCapability?: string;
  /**
   * 'gmail': Gmail's folders for the Gmail stand-in (emulators/gmail-imap): `[Gmail]/Sent Mail`,
   * `[Gmail]/Drafts`, `[Gmail]/Trash`, `[Gmail]/Spam`, and All Mail as a virtual folder over every
   * folder but Trash and Spam (GMAIL_ALL_MAIL), whose saves land in GMAIL_ARCHIVED.
   */
  folders?: 'standard' | 'gmail';
  /**
   * false: no keywords kept, as on Exchange (PERMANENTFLAGS without \\*). Dovecot has no setting for
   * that; its ACL plugin does it: a global ACL without the `w` right (flags other than \\Seen and
   * \\Deleted, keywords among them) on every folder but Drafts, which keeps \\Draft.
   */
  keywords?: boolean;
  /**
   * XOAUTH2 and OAUTHBEARER beside PLAIN and LOGIN (IMAP, and SMTP submission through the auth
   * socket): an `oauth2` passdb that asks `tokeninfoUrl` + the token (Google's tokeninfo shape, e.g.
   * the Gmail emulator's `/tokeninfo?access_token=`) and takes the answer's `email` as the user.
   */
  oauth2?: { tokeninfoUrl: string };
  log?: (line: string) => void;
}

export interface DovecotPaths {
  config: string;
  /** Postfix delivers here (LMTP). */
  lmtpSocket: string;
  /** Postfix authenticates SMTP submission here (smtpd_sasl_type = dovecot). */
  authSocket: string;
  /** The accounts' passwd file. */
  passwd: string;
}

export interface Dovecot extends DovecotPaths {
  version: string;
  /** Stops Dovecot (every IMAP connection drops) and starts it again on the same ports and mail. */
  restart(): Promise<void>;
  /** doveadm kick: drops every IMAP connection of `address`; resolves with how many were dropped. */
  kick(address: string): Promise<number>;
  /** The user changes their password (the passwd file rewritten; Dovecot reads it again at the next login). */
  setPassword(address: string, password: string): Promise<void>;
  outputTail(): string;
  stop(): Promise<void>;
}

export async function dovecotVersion(): Promise<string> {
  const { stdout } = await run('dovecot', ['--version']);
  return stdout.trim().split(/\s+/)[0] ?? '';
}

export async function startDovecot(opts: DovecotOptions): Promise<Dovecot> {
  const version = await dovecotVersion();
  const paths = await writeDovecotConfig(opts, version);
  let child = await launch(opts, paths.config);
  const kick = async (address: string): Promise<number> => {
    // doveadm kick exits 0 when it dropped someone; its stdout names the users it kicked.
    const { stdout } = await run('doveadm', ['-c', paths.config, 'kick', address]).catch(
      (err: { stdout?: string; code?: number }) => {
        if (err.code === 68) return { stdout: '' }; // EX_NOUSER: nobody connected
        throw err;
      },
    );
    const counted = /\((\d+)\)/.exec(stdout);
    return counted ? Number(counted[1]) : stdout.includes(address) ? 1 : 0;
  };
  return {
    ...paths,
    version,
    restart: async () => {
      await child.stop();
      child = await launch(opts, paths.config);
    },
    kick,
    setPassword: async (address, password) => {
      if (!opts.accounts.some((a) => a.address === address)) throw new Error(`mail-servers: no mailbox ${address}`);
      opts = { ...opts, accounts: opts.accounts.map((a) => (a.address === address ? { ...a, password } : a)) };
      await writePasswd(opts, paths.passwd);
    },
    outputTail: () => child.outputTail(),
    stop: () => child.stop(),
  };
}

async function launch(opts: DovecotOptions, config: string): Promise<BoundChild> {
  const child = spawnBoundToUs('dovecot', ['-F', '-c', config], { log: opts.log, stopGraceMs: 5_000 });
  try {
    await waitForGreeting('Dovecot', child, opts.imapPort, '* OK');
  } catch (err) {
    await child.stop();
    throw err;
  }
  return child;
}

async function writeDovecotConfig(opts: DovecotOptions, version: string): Promise<DovecotPaths> {
  const { dir } = opts;
  const runDir = join(dir, 'run');
  const homes = join(dir, 'home');
  await mkdir(join(dir, 'state'), { recursive: true });
  await mkdir(homes, { recursive: true });
  await chown(homes, MAIL_UID, MAIL_UID);
  if (opts.folders === 'gmail') {
    for (const a of opts.accounts) await writeAllMail(join(homes, a.address));
  }
  const passwd = join(dir, 'dovecot.passwd');
  await writePasswd(opts, passwd);
  const dovecotGid = await run('id', ['-g', 'dovecot']).then((r) => Number(r.stdout.trim()));
  const is24 = /^2\.(4|[5-9])|^[3-9]\./.test(version);
  // Dovecot 2.4 dropped global ACL files (ACLs are config filters there): not written for it yet.
  if (opts.keywords === false && is24) throw new Error(`mail-servers: keywords: false is built for Dovecot 2.3 (a global ACL file); Dovecot ${version} has none.`);
  // Drafts first: for one identifier the first matching line of a global ACL file is taken.
  if (opts.keywords === false) await writeFile(join(dir, 'global-acl'), 'Drafts owner lrwstipekxa\n* owner lrstipekxa\n');
  if (opts.oauth2 && is24) throw new Error(`mail-servers: oauth2 is built for Dovecot 2.3's oauth2 passdb; Dovecot ${version}'s settings differ.`);
  if (opts.oauth2) {
    if (/\s/.test(opts.oauth2.tokeninfoUrl)) throw new Error('mail-servers: the tokeninfo URL has no spaces');
    const oauthConf = join(dir, 'dovecot-oauth2.conf.ext');
    await writeFile(oauthConf, `tokeninfo_url = ${opts.oauth2.tokeninfoUrl}\nusername_attribute = email\n`, { mode: 0o640 });
    await chown(oauthConf, 0, dovecotGid);
  }
  const config = join(dir, 'dovecot.conf');
  await writeFile(config, (is24 ? dovecot24Config : dovecot23Config)({ ...opts, runDir, passwd, version }));
  return { config, lmtpSocket: join(runDir, 'lmtp'), authSocket: join(runDir, 'auth-postfix'), passwd };
}

/** The passwd file of the accounts (written again when a password changes: a new file renamed over it, read by Dovecot at the next login). */
async function writePasswd(opts: DovecotOptions, passwd: string): Promise<void> {
  const homes = join(opts.dir, 'home');
  const lines = opts.accounts.map((a) => {
    if (/[:\s]/.test(a.address + a.password)) throw new Error(`test account ${a.address}: no ':' or spaces`);
    return `${a.address}:{PLAIN}${a.password}:${MAIL_UID}:${MAIL_UID}::${join(homes, a.address)}::`;
  });
  const next = `${passwd}.next`;
  await writeFile(next, lines.join('\n') + '\n', { mode: 0o640 });
  // Dovecot's auth process runs as its internal user "dovecot".
  const dovecotGid = await run('id', ['-g', 'dovecot']).then((r) => Number(r.stdout.trim()));
  await chown(next, 0, dovecotGid);
  await rename(next, passwd);
}

interface ConfigInput extends DovecotOptions {
  runDir: string;
  passwd: string;
  version: string;
}

// Special-use folders, created and subscribed on first login. sdbox rather than Maildir: Maildir
// keeps at most 26 keywords per mailbox, and the product stores its state in keywords.
const mailboxes = (list: Array<[string, string?]>) =>
  list.map(([name, use]) => `  mailbox "${name}" {\n${use ? `    special_use = ${use}\n` : ''}    auto = subscribe\n  }`).join('\n');
const MAILBOXES = mailboxes([
  ['Drafts', '\\Drafts'],
  ['Sent', '\\Sent'],
  ['Archive', '\\Archive'],
  ['Junk', '\\Junk'],
  ['Trash', '\\Trash'],
]);

/** Gmail's layout: its special folders under [Gmail]/, the real folder All Mail's saves go to, All Mail itself (virtual). */
export const GMAIL_ARCHIVED = '[Gmail]/Archived';
export const GMAIL_ALL_MAIL = 'Virtual/All Mail';
const GMAIL_MAILBOXES = mailboxes([
  ['[Gmail]/Drafts', '\\Drafts'],
  ['[Gmail]/Sent Mail', '\\Sent'],
  ['[Gmail]/Spam', '\\Junk'],
  ['[Gmail]/Trash', '\\Trash'],
  [GMAIL_ARCHIVED],
]);

// All Mail as Dovecot's virtual plugin gives it: every folder but Trash and Spam, the same messages
// (flags shared); a message copied or moved into it is saved in GMAIL_ARCHIVED ('!').
async function writeAllMail(home: string): Promise<void> {
  const dir = join(home, 'virtual', 'All Mail');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'dovecot-virtual'), `!${GMAIL_ARCHIVED}\n*\n-[Gmail]/Trash\n-[Gmail]/Spam\n  all\n`);
  for (const path of [home, join(home, 'virtual'), dir, join(dir, 'dovecot-virtual')]) await chown(path, MAIL_UID, MAIL_UID);
}

function dovecot23Config(c: ConfigInput): string {
  return `# Written by mail-servers for one test run (Dovecot ${c.version}).
base_dir = ${c.runDir}
state_dir = ${join(c.dir, 'state')}
log_path = /dev/stderr
protocols = imap lmtp
listen = 127.0.0.1
ssl = required
ssl_cert = <${c.certFile}
ssl_key = <${c.keyFile}
auth_mechanisms = plain login${c.oauth2 ? ' xoauth2 oauthbearer' : ''}
# Tests try wrong passwords on purpose: answer at once (the default waits 2 s).
auth_failure_delay = 0
auth_username_format = %Lu
mail_location = sdbox:~/mail
first_valid_uid = ${MAIL_UID}
${c.oauth2 ? oauth2Passdb(c) : ''}passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${c.passwd}
}
userdb {
  driver = passwd-file
  args = username_format=%u ${c.passwd}
}
${sharedTail(c, 'address')}`;
}

// From the Dovecot 2.4 documentation (settings were renamed); not run on this project's Debian 12 machines.
function dovecot24Config(c: ConfigInput): string {
  const v = c.version.split('.').slice(0, 3).join('.');
  return `dovecot_config_version = ${v}
dovecot_storage_version = ${v}
# Written by mail-servers for one test run (Dovecot ${c.version}).
base_dir = ${c.runDir}
state_dir = ${join(c.dir, 'state')}
log_path = /dev/stderr
protocols = imap lmtp
listen = 127.0.0.1
ssl = required
ssl_server_cert_file = ${c.certFile}
ssl_server_key_file = ${c.keyFile}
auth_mechanisms = plain login
# Tests try wrong passwords on purpose: answer at once (the default waits 2 s).
auth_failure_delay = 0
auth_username_format = %{user | lower}
mail_driver = sdbox
mail_path = ~/mail
first_valid_uid = ${MAIL_UID}
passdb passwd-file {
  passwd_file_path = ${c.passwd}
  default_password_scheme = PLAIN
}
userdb passwd-file {
  passwd_file_path = ${c.passwd}
}
${sharedTail(c, 'listen')}`;
}

/** The OAuth passdb: tokens checked at the tokeninfo endpoint, for the OAuth mechanisms only. */
function oauth2Passdb(c: ConfigInput): string {
  return `passdb {
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = ${join(c.dir, 'dovecot-oauth2.conf.ext')}
}
`;
}

/** The ACL plugin with one global ACL file: the owner without `w` but on Drafts (see DovecotOptions.keywords). */
function noKeywords(c: ConfigInput): string {
  return `mail_plugins = $mail_plugins acl
plugin {
  acl = vfile:${join(c.dir, 'global-acl')}
}
`;
}

/** The namespace, the IMAP listeners and the sockets, alike in both versions but for the listener's address setting. */
function sharedTail(c: ConfigInput, addressSetting: 'address' | 'listen'): string {
  const gmail = c.folders === 'gmail';
  return `namespace inbox {
  inbox = yes
  separator = /
${gmail ? GMAIL_MAILBOXES : MAILBOXES}
}
${
  // Dovecot 2.3's settings (2.4 renamed location): the stand-in has run on 2.3 only.
  gmail
    ? `mail_plugins = $mail_plugins virtual
namespace virtual {
  prefix = Virtual/
  separator = /
  location = virtual:~/virtual
  subscriptions = no
  mailbox "All Mail" {
    special_use = \\All
  }
}
`
    : ''
}protocol imap {
  mail_max_userip_connections = 100
}
${c.imapCapability ? `imap_capability = ${c.imapCapability}\n` : ''}${c.keywords === false ? noKeywords(c) : ''}service imap-login {
  inet_listener imap {
    ${addressSetting} = 127.0.0.1
    port = ${c.imapPort}
  }
  inet_listener imaps {
    ${addressSetting} = 127.0.0.1
    port = ${c.imapsPort}
    ssl = yes
  }
}
service lmtp {
  unix_listener lmtp {
    mode = 0666
  }
}
service auth {
  unix_listener auth-postfix {
    mode = 0666
  }
}
# No auth penalty (up to 15 s per login after failed ones from the same IP): tests fail logins on purpose.
service anvil {
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
`;
}
