// The Temporal client every durable-inbox process uses: configured address and namespace, and the
// encrypting data converter, so nothing readable reaches the server.
import { Client, Connection } from '@temporalio/client';
import type { Env } from '../config.js';
import type { PayloadKey } from './codec.js';
import { createDataConverter } from './data-converter.js';

export function createConnection(cfg: Pick<Env, 'TEMPORAL_ADDRESS'>): Promise<Connection> {
  return Connection.connect({ address: cfg.TEMPORAL_ADDRESS });
}

/** Close with `client.connection.close()`. */
export async function connectClient(
  cfg: Pick<Env, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'>,
  keys: readonly PayloadKey[],
): Promise<Client> {
  const connection = await createConnection(cfg);
  return new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE, dataConverter: createDataConverter(keys) });
}
