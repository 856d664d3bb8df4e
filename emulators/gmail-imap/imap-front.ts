// The IMAP side of the Gmail stand-in: a TLS listener in front of a real Dovecot (the IMAP engine:
// folders, UIDs, CONDSTORE, IDLE, MOVE, APPEND stay Dovecot's) that makes it answer as Gmail's IMAP
// does: Gmail's capability line with X-GM-EXT-1, [Gmail]/All Mail, and the X-GM items. Commands and
// answers pass through as they are but for these, line by line (literals untouched):
// - CAPABILITY (the answer and the [CAPABILITY] code): what Gmail advertises and Dovecot has, plus
//   X-GM-EXT-1; QRESYNC, OBJECTID, THREAD, SORT and the rest Gmail lacks are taken out.
// - FETCH X-GM-MSGID / X-GM-THRID / X-GM-LABELS: taken out of the command, put into each answer
//   (gmail-ids.ts, labels.ts, read by the side session).
// - STORE [+-]X-GM-LABELS: becomes STORE of the keywords that keep labels (labels.ts).
// - SEARCH X-GM-RAW / X-GM-THRID / X-GM-MSGID: becomes SEARCH keys (raw-search.ts) or UID sets.
// - The folder names: Dovecot's virtual `Virtual/All Mail` is `[Gmail]/All Mail`; the folder its
//   saves land in and the virtual namespace are not listed.
import { createServer, connect, type Server, type TLSSocket } from 'node:tls';
import { SideSession, type Upstream } from './side-session.js';
import { isLabelKeyword, labelToFlag } from './labels.js';
import { rawSearchKeys, UnsupportedRawSearch } from './raw-search.js';

/** The capabilities Gmail's IMAP advertises (emailjs-imap-client#119, deltachat-core#200), less COMPRESS (a proxy that rewrites cannot pass compressed bytes). */
const GMAIL_CAPABILITIES = ['IMAP4REV1', 'UNSELECT', 'IDLE', 'NAMESPACE', 'QUOTA', 'ID', 'XLIST', 'CHILDREN', 'UIDPLUS', 'ENABLE', 'MOVE', 'CONDSTORE', 'ESEARCH', 'UTF8=ACCEPT', 'LIST-EXTENDED', 'LIST-STATUS'];
const SPECIAL_USE: Record<string, string> = {
  '[Gmail]/Sent Mail': '\\Sent',
  '[Gmail]/Drafts': '\\Drafts',
  '[Gmail]/Spam': '\\Junk',
  '[Gmail]/Trash': '\\Trash',
};
const KEPT_FROM_DOVECOT = /^(AUTH=|SASL-IR$|LITERAL[+-]$|STARTTLS$|LOGINDISABLED$)/i;

export interface ImapFrontOptions {
  upstream: Upstream;
  account: { user: string; password: string };
  /** The name Dovecot gives All Mail (its virtual folder) and the real folder All Mail's saves go to. */
  allMail: string;
  archived: string;
  cert: string;
  key: string;
}

export interface ImapFront {
  port: number;
  /** Every command line clients sent (before rewriting; logins masked), for tests to check what went out. */
  commands: string[];
  close(): Promise<void>;
}

export async function startImapFront(opts: ImapFrontOptions): Promise<ImapFront> {
  const side = await SideSession.open(opts.upstream, opts.account, opts.allMail);
  const commands: string[] = [];
  const sockets = new Set<TLSSocket>();
  const server: Server = createServer({ cert: opts.cert, key: opts.key }, (client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    new FrontSession(client, opts, side, commands);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    commands,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await side.close();
    },
  };
}

interface Pending {
  kind: 'select' | 'gm' | 'xlist';
  folder?: string;
  items?: Set<string>;
}

const LITERAL = /\{(\d+)\+?\}\r\n$/;

/** Splits a byte stream into lines (CRLF kept) and literals. */
class Lines {
  private buffer = Buffer.alloc(0);
  private literalLeft = 0;
  push(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
  }
  /** The next line or literal, or undefined when more bytes are needed. */
  next(): { line: string } | { literal: Buffer } | undefined {
    if (this.literalLeft > 0) {
      if (this.buffer.length === 0) return undefined;
      const take = Math.min(this.literalLeft, this.buffer.length);
      const literal = this.buffer.subarray(0, take);
      this.buffer = this.buffer.subarray(take);
      this.literalLeft -= take;
      return { literal };
    }
    const end = this.buffer.indexOf('\r\n');
    if (end < 0) return undefined;
    const line = this.buffer.subarray(0, end + 2).toString('latin1');
    this.buffer = this.buffer.subarray(end + 2);
    const literal = LITERAL.exec(line);
    if (literal) this.literalLeft = Number(literal[1]);
    return { line };
  }
}

class FrontSession {
  private readonly upstream: TLSSocket;
  private readonly fromClient = new Lines();
  private readonly fromServer = new Lines();
  private clientBusy = false;
  private serverBusy = false;
  private commandStart = true;
  private responseStart = true;
  private selected: string | undefined;
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly client: TLSSocket,
    private readonly opts: ImapFrontOptions,
    private readonly side: SideSession,
    private readonly commands: string[],
  ) {
    this.upstream = connect({ host: opts.upstream.host, port: opts.upstream.port, ca: [opts.upstream.ca]});
    // Answers are relayed line by line: without this, Nagle's algorithm holds each small write for the
    // peer's delayed ACK (about 40 ms a round trip on loopback), which made every command slow.
    this.upstream.setNoDelay(true);
    client.setNoDelay(true);
    const end = () => {
      client.destroy();
      this.upstream.destroy();
    };
    this.upstream.on('error', end).on('close', end);
    client.on('error', end).on('close', end);
    client.on('data', (chunk: Buffer) => {
      this.fromClient.push(chunk);
      void this.pumpClient();
    });
    this.upstream.on('data', (chunk: Buffer) => {
      this.fromServer.push(chunk);
      void this.pumpServer();
    });
  }

  // ---- client to Dovecot -------------------------------------------------------------------------

  private async pumpClient(): Promise<void> {
    if (this.clientBusy) return;
    this.clientBusy = true;
    try {
      for (let item = this.fromClient.next(); item; item = this.fromClient.next()) {
        if ('literal' in item) {
          this.upstream.write(item.literal);
          continue;
        }
        const start = this.commandStart;
        this.commandStart = !LITERAL.test(item.line);
        if (!start) {
          this.upstream.write(this.toDovecotNames(item.line), 'latin1');
          continue;
        }
        const out = await this.command(item.line).catch((err: Error) => ({ reply: `${tagOf(item.line)} NO [SERVERBUG] ${err.message.replace(/[\r\n]/g, ' ')}\r\n` }));
        if ('reply' in out) this.client.write(out.reply, 'latin1');
        else this.upstream.write(out.send, 'latin1');
      }
    } catch {
      this.client.destroy();
    } finally {
      this.clientBusy = false;
    }
  }

  private async command(rawLine: string): Promise<{ send: string } | { reply: string }> {
    const line = this.toDovecotNames(rawLine);
    const m = /^(\S+) (UID )?([A-Z]+)\b(.*)\r\n$/i.exec(line);
    if (!m) return { send: line };
    const [, tag, uid = '', verb, rest] = m as unknown as [string, string, string | undefined, string, string];
    this.commands.push(/^(LOGIN|AUTHENTICATE)$/i.test(verb) ? `${tag} ${verb.toUpperCase()} ***` : rawLine.replace(/\r\n$/, ''));
    switch (verb.toUpperCase()) {
      case 'SELECT':
      case 'EXAMINE':
        this.pending.set(tag, { kind: 'select', folder: mailboxArgument(rest) });
        return { send: line };
      case 'FETCH':
        return { send: this.fetch(tag, uid, rest) };
      case 'STORE':
        return this.store(tag, uid, rest);
      case 'SEARCH':
        return this.search(tag, uid, rest);
      case 'XLIST':
        this.pending.set(tag, { kind: 'xlist' });
        return { send: `${tag} LIST${rest}\r\n` };
    }
    return { send: line };
  }

  private fetch(tag: string, uid: string, rest: string): string {
    const items = new Set<string>();
    const stripped = rest.replace(/\s*\bX-GM-(MSGID|THRID|LABELS)\b/gi, (_all, name: string) => {
      items.add(name.toUpperCase());
      return '';
    });
    if (items.size > 0 && this.selected) this.pending.set(tag, { kind: 'gm', folder: this.selected, items });
    // A list left empty, or a lone X-GM item, asks for the UID alone.
    const fixed = stripped.replace(/\(\s*\)/, '(UID)').replace(/^(\s+\S+)\s*$/, '$1 (UID)');
    return `${tag} ${uid}FETCH${fixed}\r\n`;
  }

  private async store(tag: string, uid: string, rest: string): Promise<{ send: string } | { reply: string }> {
    const m = /^ (\S+) ([+-]?)X-GM-LABELS(\.SILENT)? (.*)$/i.exec(rest);
    if (!m) return { send: `${tag} ${uid}STORE${rest}\r\n` };
    const [, set, sign, silent = '', list] = m as unknown as [string, string, string, string | undefined, string];
    if (!sign) return { reply: `${tag} NO [CANNOT] The Gmail stand-in does not replace a message's labels: add or remove them\r\n` };
    const labels = astrings(list);
    if (labels.some((l) => l.toLowerCase() === '\\inbox')) {
      // \Inbox is a folder here: added, the message comes out of the archive into INBOX; removed, it goes in.
      if (labels.length > 1 || !uid || !this.selected) return { reply: `${tag} NO [CANNOT] The Gmail stand-in takes \\Inbox alone, by UID STORE\r\n` };
      const [from, to] = sign === '+' ? [this.opts.archived, 'INBOX'] : ['INBOX', this.opts.archived];
      await this.side.moveByMessageId(this.selected, set, from, to);
      return { reply: `${tag} OK Store completed\r\n` };
    }
    const flags: string[] = [];
    for (const label of labels) {
      const flag = labelToFlag(label);
      if (!flag) return { reply: `${tag} NO [CANNOT] The Gmail stand-in does not move messages by label (${label}): MOVE them\r\n` };
      flags.push(flag);
    }
    if (this.selected) this.pending.set(tag, { kind: 'gm', folder: this.selected, items: new Set(['LABELS']) });
    return { send: `${tag} ${uid}STORE ${set} ${sign}FLAGS${silent} (${flags.join(' ')})\r\n` };
  }

  private async search(tag: string, uid: string, rest: string): Promise<{ send: string } | { reply: string }> {
    let keys = rest;
    const raw = /\bX-GM-RAW "((?:[^"\\]|\\.)*)"/i.exec(keys);
    if (raw) {
      try {
        keys = keys.replace(raw[0], `(${rawSearchKeys(raw[1]!.replace(/\\(.)/g, '$1'))})`);
      } catch (err) {
        if (err instanceof UnsupportedRawSearch) return { reply: `${tag} NO [CANNOT] The Gmail stand-in does not answer ${err.message} in X-GM-RAW\r\n` };
        throw err;
      }
    }
    for (const name of ['THRID', 'MSGID'] as const) {
      const m = new RegExp(`\\bX-GM-${name} (\\d+)`, 'i').exec(keys);
      if (!m || !this.selected) continue;
      const wanted = m[1];
      const uids = await this.side.uidsWhere(this.selected, (ids) => (name === 'THRID' ? ids.thrid : ids.msgid) === wanted);
      keys = keys.replace(m[0], uids.length > 0 ? `UID ${uids.join(',')}` : 'NOT ALL');
    }
    return { send: `${tag} ${uid}SEARCH${keys}\r\n` };
  }

  /** Gmail's name of All Mail is Dovecot's name of its virtual folder. */
  private toDovecotNames(line: string): string {
    return line.replaceAll('"[Gmail]/All Mail"', JSON.stringify(this.opts.allMail));
  }

  // ---- Dovecot to client -------------------------------------------------------------------------

  private async pumpServer(): Promise<void> {
    if (this.serverBusy) return;
    this.serverBusy = true;
    try {
      for (let item = this.fromServer.next(); item; item = this.fromServer.next()) {
        if ('literal' in item) {
          this.client.write(item.literal);
          continue;
        }
        const start = this.responseStart;
        this.responseStart = !LITERAL.test(item.line);
        const out = start ? await this.response(item.line) : this.rewriteText(item.line);
        if (out) this.client.write(out, 'latin1');
      }
    } catch {
      this.client.destroy();
    } finally {
      this.serverBusy = false;
    }
  }

  /** The first line of an answer from Dovecot, as Gmail would give it ('' to leave it out). */
  private async response(line: string): Promise<string> {
    const tagged = /^(\S+) (OK|NO|BAD)\b/i.exec(line);
    if (tagged && tagged[1] !== '*' && tagged[1] !== '+') {
      const pending = this.pending.get(tagged[1]!);
      this.pending.delete(tagged[1]!);
      if (pending?.kind === 'select') this.selected = tagged[2]!.toUpperCase() === 'OK' ? pending.folder : undefined;
      return this.rewriteText(line);
    }
    if (/^\* (LIST|LSUB) /i.test(line)) {
      const name = line.replace(/\r\n$/, '').replace(/^\* \S+ \([^)]*\) (NIL|"[^"]*") /, '');
      const plain = name.replace(/^"(.*)"$/, '$1');
      if (plain === this.opts.archived || plain === this.opts.allMail.split('/')[0]) return '';
      // Gmail's LIST carries the special-use attributes without being asked (it advertises no SPECIAL-USE).
      const use = plain === this.opts.allMail ? '\\All' : SPECIAL_USE[plain];
      if (use && !line.includes(use)) line = line.replace(/^(\* \S+ \()/, `$1${use} `).replace(' ) ', ') ');
      if ([...this.pending.values()].some((p) => p.kind === 'xlist')) {
        line = line.replace(/^\* LIST /i, '* XLIST ');
        if (plain === 'INBOX') line = line.replace(/^(\* XLIST \()/, '$1\\Inbox ').replace(' ) ', ') ');
      }
    }
    const fetch = /^\* (\d+) FETCH \(/i.exec(line);
    if (fetch) {
      const uid = /\bUID (\d+)/i.exec(line);
      const wanted = this.currentGm();
      if (wanted && uid) {
        const described = (await this.side.describe(wanted.folder, [Number(uid[1])])).get(Number(uid[1]));
        if (described) {
          const parts: string[] = [];
          if (wanted.items.has('THRID')) parts.push(`X-GM-THRID ${described.thrid}`);
          if (wanted.items.has('MSGID')) parts.push(`X-GM-MSGID ${described.msgid}`);
          if (wanted.items.has('LABELS')) parts.push(`X-GM-LABELS (${described.labels.map((l) => (l.startsWith('\\') ? l : quoted(l))).join(' ')})`);
          line = line.replace(fetch[0], `${fetch[0]}${parts.join(' ')} `);
        }
      }
    }
    return this.rewriteText(line);
  }

  /** The X-GM items the command under way asked for (imapflow runs one command at a time). */
  private currentGm(): { folder: string; items: Set<string> } | undefined {
    for (const [, p] of this.pending) if (p.kind === 'gm' && p.folder && p.items) return { folder: p.folder, items: p.items };
    return undefined;
  }

  private rewriteText(line: string): string {
    let out = line.replaceAll(`"${this.opts.allMail}"`, '"[Gmail]/All Mail"');
    out = out.replace(/(\* CAPABILITY |\[CAPABILITY )([^\]\r\n]*)/i, (_all, head: string, list: string) => head + gmailCapabilities(list));
    // Label keywords are labels on Gmail, never flags.
    out = out.replace(/(FLAGS \()([^)]*)\)/gi, (_all, head: string, list: string) => `${head}${list.split(' ').filter((f) => f && !isLabelKeyword(f)).join(' ')})`);
    return out;
  }
}

function gmailCapabilities(list: string): string {
  const dovecot = list.trim().split(/\s+/);
  const kept = dovecot.filter((c) => GMAIL_CAPABILITIES.includes(c.toUpperCase()) || KEPT_FROM_DOVECOT.test(c));
  // Gmail advertises XLIST (its LIST with special-use attributes, which imapflow then uses); the front answers it with Dovecot's LIST.
  return [...kept, 'XLIST', 'X-GM-EXT-1'].join(' ');
}

function tagOf(line: string): string {
  return line.split(' ', 1)[0] ?? '*';
}

function quoted(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** The mailbox name a SELECT/EXAMINE names (quoted or an atom). */
function mailboxArgument(rest: string): string | undefined {
  const m = /^ ("((?:[^"\\]|\\.)*)"|(\S+))/.exec(rest);
  if (!m) return undefined;
  return m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
}

/** The strings of a parenthesised list (or a single one): atoms, \System atoms, quoted strings. */
function astrings(list: string): string[] {
  const inner = list.trim().replace(/^\((.*)\)$/, '$1');
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (let m = re.exec(inner); m; m = re.exec(inner)) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!);
  return out;
}
