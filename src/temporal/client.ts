// The Temporal client every durable-inbox process uses: the configured connection (address, TLS,
// API key: src/temporal/connection.ts) and namespace, and the encrypting data converter, so nothing
// readable reaches the server.
import { Client, Connection } from '@temporalio/client';
import type { PayloadKey } from './codec.js';
import { temporalConnectionOptions, type TemporalConnectionSettings } from './connection.js';
import { createDataConverter } from './data-converter.js';
import { clientTracingInterceptors } from './tracing.js';

export function createConnection(cfg: TemporalConnectionSettings): Promise<Connection> {
  return Connection.connect(temporalConnectionOptions(cfg));
}

/** Close with `client.connection.close()`. */
export async function connectClient(cfg: TemporalConnectionSettings, keys: readonly PayloadKey[]): Promise<Client> {
  const connection = await createConnection(cfg);
  return new Client({
    connection,
    namespace: cfg.TEMPORAL_NAMESPACE,
    dataConverter: createDataConverter(keys),
    interceptors: clientTracingInterceptors(),
  });
}
