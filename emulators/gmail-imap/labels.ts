// Gmail's labels on a Dovecot message. A user label is the keyword `$GL_` + the name's UTF-8 bytes in
// hex (any name fits an IMAP atom); \Important is `$GL_` alone with a system mark; \Starred is
// \Flagged; the folder a message is in gives \Inbox, \Sent, \Draft, \Trash or \Spam. The keywords
// never reach the client: the front takes them out of FLAGS, PERMANENTFLAGS and the folder's FLAGS.
const USER_PREFIX = '$GL_';
const IMPORTANT = '$GLSYS_Important';

/** The folder (as Dovecot names it) each system label stands for. */
export const FOLDER_LABELS: Record<string, string> = {
  INBOX: '\\Inbox',
  '[Gmail]/Sent Mail': '\\Sent',
  '[Gmail]/Drafts': '\\Draft',
  '[Gmail]/Trash': '\\Trash',
  '[Gmail]/Spam': '\\Spam',
};

export function isLabelKeyword(flag: string): boolean {
  return flag.startsWith(USER_PREFIX) || flag === IMPORTANT;
}

/** The flag that keeps a label; undefined for a label that is a folder (\Inbox, \Sent, ...), which a STORE cannot set here. */
export function labelToFlag(label: string): string | undefined {
  if (label.toLowerCase() === '\\starred') return '\\Flagged';
  if (label.toLowerCase() === '\\important') return IMPORTANT;
  if (label.startsWith('\\')) return undefined;
  return USER_PREFIX + Buffer.from(label, 'utf8').toString('hex');
}

/** X-GM-LABELS of a message in `folder` with `flags`, as Gmail lists them (system labels first). */
export function labelsOf(folder: string | undefined, flags: Iterable<string>): string[] {
  const labels: string[] = [];
  const own = folder ? FOLDER_LABELS[folder] : undefined;
  if (own) labels.push(own);
  const set = new Set(flags);
  if (set.has('\\Flagged')) labels.push('\\Starred');
  if (set.has('\\Draft') && own !== '\\Draft') labels.push('\\Draft');
  if (set.has(IMPORTANT)) labels.push('\\Important');
  for (const flag of set) {
    if (flag.startsWith(USER_PREFIX)) labels.push(Buffer.from(flag.slice(USER_PREFIX.length), 'hex').toString('utf8'));
  }
  return labels;
}
