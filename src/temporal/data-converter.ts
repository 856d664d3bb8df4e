// The data converter every client and worker of durable-inbox uses: default JSON payloads,
// then AES-GCM encryption on the wire. Client and worker must agree, or neither can read the other.
import type { DataConverter } from '@temporalio/common';
import { AesGcmPayloadCodec, type PayloadKey } from './codec.js';

export function createDataConverter(keys: readonly PayloadKey[]): DataConverter {
  return { payloadCodecs: [new AesGcmPayloadCodec(keys)] };
}
