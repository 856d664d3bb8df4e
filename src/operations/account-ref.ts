// How an operator (the CLI, the MCP server) names an account: its email address (any case) or its id.
import type { PrismaClient } from '../db/client.js';
import { InvalidRequest } from './errors.js';

export async function findAccount(prisma: PrismaClient, ref: string): Promise<{ id: string; email: string } | null> {
  const where = ref.includes('@') ? { email: ref.toLowerCase() } : { id: ref };
  // An id that is not a UUID makes Postgres refuse the comparison: no such account either.
  return prisma.account.findUnique({ where, select: { id: true, email: true } }).catch(() => null);
}

export const noSuchAccount = (ref: string) => `no account ${ref} (see npm run cli -- accounts list)`;

/** The account a command names; no such account is an invalid request. */
export async function requireAccount(prisma: PrismaClient, ref: string): Promise<{ id: string; email: string }> {
  const found = await findAccount(prisma, ref);
  if (!found) throw new InvalidRequest(noSuchAccount(ref));
  return found;
}

/** The id of the account an optional --account names. */
export async function accountIdOf(prisma: PrismaClient, ref: string | undefined): Promise<string | undefined> {
  return ref === undefined ? undefined : (await requireAccount(prisma, ref)).id;
}
