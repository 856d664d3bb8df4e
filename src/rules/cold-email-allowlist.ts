// The cold-email gate's allowlist (table cold_email_allowlist): senders and domains of an account
// whose mail the gate never holds back. Managed with `npm run cli -- cleanup cold-allow ...`; read by
// readThread's gate (src/thread/gmail-activities.ts). A domain entry covers its subdomains, as a
// domain rule does.
import { domainToASCII } from 'node:url';
import { canonicalAddress, domainOf } from '../gmail/addresses.js';
import type { SqlExecutor } from '../db/sql-executor.js';

export type AllowKind = 'sender' | 'domain';

export interface AllowEntry {
  kind: AllowKind;
  value: string;
  createdAt: Date;
}

export class InvalidAllowEntryError extends Error {}

/** The entry's stored form: a canonical address, or a lower-case ASCII domain; throws when there is none. */
export function allowValue(kind: AllowKind, raw: string): string {
  const value = kind === 'sender' ? canonicalAddress(raw) : domainToASCII(raw.trim().toLowerCase().replace(/^@/, ''));
  if (!value || (kind === 'domain' && (value.includes('@') || !value.includes('.')))) {
    throw new InvalidAllowEntryError(`not a usable ${kind}: ${JSON.stringify(raw.slice(0, 80))}`);
  }
  return value;
}

/** Adds the entry; true when it was new. */
export async function allow(db: SqlExecutor, accountId: string, kind: AllowKind, raw: string): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO cold_email_allowlist (account_id, kind, value) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING value`,
    [accountId, kind, allowValue(kind, raw)],
  );
  return rows.length > 0;
}

/** Removes the entry; true when it was there. */
export async function disallow(db: SqlExecutor, accountId: string, kind: AllowKind, raw: string): Promise<boolean> {
  const rows = await db.query(`DELETE FROM cold_email_allowlist WHERE account_id = $1 AND kind = $2 AND value = $3 RETURNING value`, [
    accountId,
    kind,
    allowValue(kind, raw),
  ]);
  return rows.length > 0;
}

export async function listAllowed(db: SqlExecutor, accountId: string): Promise<AllowEntry[]> {
  const rows = await db.query<{ kind: AllowKind; value: string; created_at: Date }>(
    `SELECT kind, value, created_at FROM cold_email_allowlist WHERE account_id = $1 ORDER BY kind DESC, value`,
    [accountId],
  );
  return rows.map((r) => ({ kind: r.kind, value: r.value, createdAt: r.created_at }));
}

/**
 * The entry that allows this sender (`sender a@x.example`, `domain x.example`), sender first; undefined
 * when none does. `sender` is the canonical address the message's parsed From gave.
 */
export async function allowedBy(db: SqlExecutor, accountId: string, sender: string): Promise<string | undefined> {
  if (!sender) return undefined;
  const domain = domainOf(sender);
  const rows = await db.query<{ kind: AllowKind; value: string }>(
    `SELECT kind, value FROM cold_email_allowlist
     WHERE account_id = $1 AND ((kind = 'sender' AND value = $2) OR (kind = 'domain' AND ($3 = value OR right($3, length(value) + 1) = '.' || value)))
     ORDER BY kind DESC LIMIT 1`,
    [accountId, sender, domain],
  );
  const row = rows[0];
  return row ? `${row.kind} ${row.value}` : undefined;
}
