// The data converter every client and worker of durable-inbox uses: default JSON payloads,
// then AES-GCM encryption on the wire, and failures whose message and stack trace are payloads too
// (sealed by the same codec). Client and worker must agree, or neither can read the other.
import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { AesGcmPayloadCodec, type PayloadKey } from './codec.js';

/** A module exporting `failureConverter` (encodeCommonAttributes on); workflow bundles take it too. */
export const failureConverterPath = fileURLToPath(new URL('./failure-converter.cjs', import.meta.url));

export function createDataConverter(keys: readonly PayloadKey[]): DataConverter {
  return { payloadCodecs: [new AesGcmPayloadCodec(keys)], failureConverterPath };
}
