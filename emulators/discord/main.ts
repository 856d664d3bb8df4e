// Standalone Discord webhook emulator: `npx tsx emulators/discord/main.ts [--port 8237]
// [--host 127.0.0.1] [--name "Durable Inbox"] [--webhook-id ID --webhook-token TOKEN]
// [--webhook-limit 5 --webhook-window 2] [--channel-limit 30 --channel-window 60] [--no-rate-limits]
// [--latency-ms 0]`. Prints the URL of one webhook created at start; point the product at it
// (the coming DISCORD_WEBHOOK_URL setting).
import { parseArgs } from 'node:util';
import { startDiscordEmulator } from './index.js';

const USAGE = `usage: tsx emulators/discord/main.ts [--port 8237] [--host ADDR] [--name NAME]
  [--webhook-id SNOWFLAKE --webhook-token TOKEN] [--webhook-limit N --webhook-window SECONDS]
  [--channel-limit N --channel-window SECONDS] [--no-rate-limits] [--latency-ms N]`;

let values;
try {
  ({ values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      name: { type: 'string' },
      'webhook-id': { type: 'string' },
      'webhook-token': { type: 'string' },
      'webhook-limit': { type: 'string' },
      'webhook-window': { type: 'string' },
      'channel-limit': { type: 'string' },
      'channel-window': { type: 'string' },
      'no-rate-limits': { type: 'boolean' },
      'latency-ms': { type: 'string' },
      help: { type: 'boolean' },
    },
  }));
} catch (err) {
  console.error(`discord emulator: ${(err as Error).message}\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const num = (value: string | undefined) => (value === undefined ? undefined : Number(value));

try {
  const emulator = await startDiscordEmulator({
    port: num(values.port) ?? 8237,
    ...(values.host ? { host: values.host } : {}),
    latencyMs: num(values['latency-ms']),
    rateLimits: {
      enabled: !values['no-rate-limits'],
      webhook: { limit: num(values['webhook-limit']), windowSeconds: num(values['webhook-window']) },
      channel: { limit: num(values['channel-limit']), windowSeconds: num(values['channel-window']) },
    },
    webhooks: [
      {
        ...(values.name ? { name: values.name } : {}),
        ...(values['webhook-id'] ? { id: values['webhook-id'] } : {}),
        ...(values['webhook-token'] ? { token: values['webhook-token'] } : {}),
      },
    ],
  });
  console.log(`discord emulator listening on ${emulator.url} (control: ${emulator.url}/__emulator/info)`);
  console.log(`webhook URL: ${emulator.webhooks[0]!.url}`);
  const stop = () => {
    void emulator.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (err) {
  console.error(`discord emulator: ${(err as Error).message}`);
  process.exit(1);
}
