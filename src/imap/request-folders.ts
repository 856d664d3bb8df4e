// Folders mode (a server that keeps no keywords, e.g. Exchange): the user's requests are folders a
// message is moved into from any client. A request label ("Done", "Rework") is a folder of that name;
// a timer label ("Snooze/Tomorrow") a folder under its prefix's folder, with the server's delimiter.
// Our informational labels (Outbox, Action Required, ...) have no folder: see docs/imap.md "Folders mode".

export interface RequestFolderNames {
  /** Request labels with a folder of their own (the configured Done and Rework names). */
  labels: string[];
  /** Timer label prefixes (src/time/labels.ts): each a folder, its timers the folders under it. */
  prefixes: string[];
}

export const DEFAULT_REQUEST_FOLDERS: RequestFolderNames = {
  labels: ['Done', 'Rework'],
  prefixes: ['Snooze', 'Remind', 'Send'],
};

/** The folders created on connect when missing: one per request label and per timer prefix. */
export function requestFolderRoots(names: RequestFolderNames): string[] {
  return [...names.labels, ...names.prefixes].map((n) => n.trim().replace(/\/+$/, '')).filter((n) => n.length > 0);
}

/** Whether a label is one the user asks with (so a folder in folders mode): a request label or a timer label. */
export function isRequestLabel(label: string, names: RequestFolderNames): boolean {
  const lower = label.toLowerCase();
  if (names.labels.some((l) => l.toLowerCase() === lower)) return true;
  return names.prefixes.some((p) => lower.startsWith(`${p.toLowerCase()}/`) && label.length > p.length + 1);
}

/** The folder path of a request label: "Snooze/Tomorrow" → "Snooze.Tomorrow" on a server whose delimiter is ".". */
export function requestFolderPath(label: string, delimiter: string): string {
  return label.split('/').join(delimiter);
}

/** The request label a folder stands for (its path with "/" for the delimiter), or undefined for any other folder. */
export function requestLabelOf(path: string, delimiter: string, names: RequestFolderNames): string | undefined {
  const label = path.split(delimiter).join('/');
  return isRequestLabel(label, names) ? label : undefined;
}
