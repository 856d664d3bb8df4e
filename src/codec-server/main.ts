// Standalone codec server (`npm run start:codec`) for the Temporal Web UI.
import { codecServerSettingsFromConfig } from '../config/settings.js';
import { exitOnConfigError, loadConfigOrExit } from '../config/env.js';
import { AesGcmPayloadCodec } from '../temporal/codec.js';
import { resolvePayloadKeys } from '../temporal/encryption-keys.js';
import { createLogger } from '../shared/log.js';
import { startCodecServer } from './server.js';

const cfg = loadConfigOrExit(process.env, { modeRequired: true });
const settings = exitOnConfigError(() => codecServerSettingsFromConfig(cfg));
const log = createLogger('codec');
const server = await startCodecServer({
  host: settings.host,
  port: settings.port,
  codec: new AesGcmPayloadCodec(await resolvePayloadKeys(cfg)),
  corsOrigins: [settings.corsOrigin],
  token: settings.token,
});
log.info(`listening on ${server.url}, CORS origin ${settings.corsOrigin}${settings.token ? '' : ', no token (dev mode)'}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void server.close().then(() => process.exit(0)));
}
