// Standalone codec server (`npm run start:codec`) for the Temporal Web UI.
import { loadConfigOrExit } from '../config.js';
import { AesGcmPayloadCodec } from '../temporal/codec.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { createLogger } from '../shared/log.js';
import { startCodecServer } from './server.js';

const cfg = loadConfigOrExit();
const log = createLogger('codec');
const server = await startCodecServer({
  host: cfg.CODEC_SERVER_HOST,
  port: cfg.CODEC_SERVER_PORT,
  codec: new AesGcmPayloadCodec(await resolvePayloadKeys(cfg)),
  corsOrigins: [cfg.CODEC_CORS_ORIGIN],
  token: cfg.CODEC_SERVER_TOKEN,
});
log.info(`listening on ${server.url}, CORS origin ${cfg.CODEC_CORS_ORIGIN}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void server.close().then(() => process.exit(0)));
}
