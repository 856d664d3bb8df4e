// IMAP/SMTP accounts: what the connection layer takes (server, TLS mode, credentials) and what it
// reports back (the server's capabilities as the product uses them, or one sentence saying why not).

/** 'implicit': TLS from the first byte (IMAP 993, SMTP 465). 'starttls': plain, then upgraded, never used without TLS (IMAP 143, SMTP 587). */
export type TlsMode = 'implicit' | 'starttls';

export interface MailServerAddress {
  host: string;
  port: number;
  tls: TlsMode;
  /**
   * Extra trust anchors (PEM) for a server whose certificate is not signed by a CA Node trusts:
   * a self-hosted server, or the tests' own CA. The system's CAs still apply.
   */
  ca?: string | string[];
  /** The name the certificate must carry, when `host` is an IP address or an alias. */
  servername?: string;
}

/** An app password (sealed at rest like the OAuth tokens), or an OAuth access token for SASL XOAUTH2. */
export type MailCredentials = { user: string; password: string } | { user: string; accessToken: string };

export type MailProtocol = 'imap' | 'smtp';

/** Why connecting failed; each kind gets its own sentence (see MailServerError). */
export type MailServerFailureKind =
  /** The server refused the user name and password (or the access token). */
  | 'bad-credentials'
  /** The certificate was refused: untrusted issuer, self-signed, wrong name, expired. */
  | 'tls-untrusted'
  /** TLS mode and port disagree (implicit TLS on a plain port, or STARTTLS on an implicit-TLS port). */
  | 'tls-mode'
  /** The server lacks an extension the product needs (CONDSTORE, STARTTLS, AUTH=XOAUTH2, ...). */
  | 'missing-extension'
  /** Name not resolving, connection refused, no route. */
  | 'unreachable'
  | 'timeout'
  /** Anything else: the server answered something we did not expect. */
  | 'protocol';

export type TlsRefusal = 'self-signed' | 'untrusted-issuer' | 'name-mismatch' | 'expired' | 'not-yet-valid' | 'other';

/** RFC 6154 special uses the product looks for. */
export type SpecialUse = 'drafts' | 'sent' | 'archive' | 'junk' | 'trash' | 'all' | 'flagged';

export interface SpecialFolder {
  path: string;
  /** 'attribute': the server marked it (RFC 6154 LIST attribute); 'name': found by a usual name. */
  found: 'attribute' | 'name';
}

/** What the product may rely on for one IMAP account, as found at connect time. */
export interface ImapCapabilities {
  /** CAPABILITY after login, upper-cased (e.g. 'CONDSTORE', 'AUTH=PLAIN'). */
  advertised: string[];
  /**
   * CONDSTORE enabled and INBOX has MODSEQs: changes are followed by MODSEQ. Without it (Exchange)
   * by UIDNEXT and a scan of every message's flags, compared with the label memory (docs/imap.md).
   */
  condstore: boolean;
  /** QRESYNC enabled: expunges come as UIDs (VANISHED) and a resync needs no full UID list. */
  qresync: boolean;
  /** IDLE pushes changes; without it the product polls. */
  idle: boolean;
  /** MOVE (RFC 6851); without it COPY + \Deleted + EXPUNGE. */
  move: boolean;
  /** UIDPLUS: APPEND and COPY/MOVE report the new UIDs. */
  uidplus: boolean;
  /** Gmail's extensions (X-GM-MSGID, X-GM-THRID, X-GM-LABELS). */
  gmail: boolean;
  /** The server advertises SPECIAL-USE (folders may still carry the attributes without it). */
  specialUseAdvertised: boolean;
  /** Hierarchy separator of the personal namespace, e.g. '/' or '.'. */
  delimiter: string;
  inbox: string;
  folders: Partial<Record<SpecialUse, SpecialFolder>>;
  /** PERMANENTFLAGS of INBOX lists \*: the product keeps its state in keywords, else in folders. */
  keywords: boolean;
  stateIn: 'keywords' | 'folders';
  /** INBOX's HIGHESTMODSEQ ('0' without CONDSTORE) and UIDVALIDITY when checked (decimal strings: 64-bit and 32-bit unsigned). */
  inboxHighestModseq: string;
  inboxUidValidity: string;
}

