// What an IMAP server offers, reduced to the choices the product makes: CONDSTORE (or a flag scan),
// QRESYNC, IDLE or polling, special-use folders (by attribute, else by name), keywords or folders.
import type { ImapCapabilities, SpecialFolder, SpecialUse } from './contracts.js';

/** A LIST entry as imapflow returns it (specialUseSource 'name': imapflow matched a usual folder name). */
export interface ListedFolder {
  path: string;
  delimiter?: string;
  specialUse?: string;
  specialUseSource?: 'user' | 'extension' | 'name';
}

export interface SelectedInbox {
  path: string;
  permanentFlags?: Set<string>;
  highestModseq?: bigint;
  noModseq?: boolean;
  uidValidity: bigint;
}

const SPECIAL_USES: Record<string, SpecialUse> = {
  '\\Drafts': 'drafts',
  '\\Sent': 'sent',
  '\\Archive': 'archive',
  '\\Junk': 'junk',
  '\\Trash': 'trash',
  '\\All': 'all',
  '\\Flagged': 'flagged',
};

/** One folder per special use; a server's attribute wins over a folder that only has the usual name. */
export function findSpecialFolders(folders: ListedFolder[]): Partial<Record<SpecialUse, SpecialFolder>> {
  const found: Partial<Record<SpecialUse, SpecialFolder>> = {};
  for (const folder of folders) {
    const use = folder.specialUse ? SPECIAL_USES[folder.specialUse] : undefined;
    if (!use) continue;
    const how = folder.specialUseSource === 'name' ? 'name' : 'attribute';
    const seen = found[use];
    if (!seen || (seen.found === 'name' && how === 'attribute')) found[use] = { path: folder.path, found: how };
  }
  return found;
}

export function describeCapabilities(input: {
  advertised: Iterable<string>;
  enabled: Iterable<string>;
  folders: ListedFolder[];
  inbox: SelectedInbox;
}): ImapCapabilities {
  const advertised = [...input.advertised].map((c) => c.toUpperCase());
  const has = (name: string) => advertised.includes(name);
  const enabled = new Set([...input.enabled].map((c) => c.toUpperCase()));
  const keywords = input.inbox.permanentFlags?.has('\\*') ?? false;
  const delimiter = input.folders.find((f) => f.delimiter)?.delimiter ?? '/';
  return {
    advertised,
    condstore: enabled.has('CONDSTORE') && !input.inbox.noModseq && input.inbox.highestModseq !== undefined,
    qresync: enabled.has('QRESYNC'),
    idle: has('IDLE'),
    move: has('MOVE'),
    uidplus: has('UIDPLUS'),
    gmail: has('X-GM-EXT-1'),
    specialUseAdvertised: has('SPECIAL-USE'),
    delimiter,
    inbox: input.inbox.path,
    // On Gmail every user label is a folder: one found only by its name (a label called Archive) is a
    // label, not a special folder; Gmail marks its own ([Gmail]/Sent Mail, All Mail, ...) with attributes.
    folders: findSpecialFolders(has('X-GM-EXT-1') ? input.folders.filter((f) => f.specialUseSource !== 'name') : input.folders),
    keywords,
    stateIn: keywords ? 'keywords' : 'folders',
    inboxHighestModseq: String(input.inbox.highestModseq ?? 0n),
    inboxUidValidity: String(input.inbox.uidValidity),
  };
}
