// docker-compose.yml describes the same production shape as `npm run stack` (no container engine
// runs here, so this reads the file): the same Temporal release, schema steps, config files and
// search attributes, and the same worker processes per role; and it is locked down: every port is
// published on 127.0.0.1 only, and the codec server cannot start without its token.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { codecServerSettingsFromConfig } from '../../src/config/settings.js';
import { isLoopbackHost, loadConfig } from '../../src/config/env.js';
import { WORKER_ENTRY, WORKER_ROLES } from '../../src/stack/worker-processes.js';
import { projectRoot } from '../../src/temporal/project-root.js';
import { searchAttributeDefinitions } from '../../src/temporal/search-attributes.js';
import { TEMPORAL_SERVER_VERSION } from '../../src/temporal/server-binary.js';
import { temporalDynamicConfigFile, temporalServerConfigFile } from '../../src/temporal/server.js';

const compose = readFileSync(join(projectRoot(), 'docker-compose.yml'), 'utf8');
const scripts = (JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** The text of one top-level service (up to the next one). */
function service(name: string): string {
  const match = new RegExp(`\\n  ${name}:\\n([\\s\\S]*?)(?=\\n  [\\w-]+:\\n|\\nvolumes:|$)`).exec(compose);
  if (!match) throw new Error(`docker-compose.yml has no service ${name}`);
  return match[1]!;
}

describe('docker-compose.yml and npm run stack', () => {
  it('runs the Temporal release the stack builds, for the server and the schema and setup tools', () => {
    const images = [...compose.matchAll(/image: temporalio\/(server|admin-tools):(\S+)/g)].map((m) => [m[1], m[2]]);
    expect(images.map(([name]) => name).sort()).toEqual(['admin-tools', 'admin-tools', 'server']);
    for (const [, tag] of images) expect(tag).toBe(TEMPORAL_SERVER_VERSION);
  });

  it('mounts the config template and dynamic config the stack starts its server with', () => {
    const temporal = service('temporal');
    const relative = (file: string) => `./${file.slice(projectRoot().length).replace(/^\//, '')}`;
    expect(temporal).toContain(`${relative(temporalServerConfigFile())}:`);
    expect(temporal).toContain(`${relative(temporalDynamicConfigFile())}:`);
  });

  it('sets up both databases with the same three temporal-sql-tool steps', () => {
    const schema = service('temporal-schema');
    expect(schema).toContain('temporal-sql-tool --db $$db create-database');
    expect(schema).toContain('temporal-sql-tool --db $$db setup-schema -v 0.0');
    expect(schema).toMatch(/temporal-sql-tool --db \$\$db update-schema -d \/etc\/temporal\/schema\/postgresql\/v12\/\$\$schema\/versioned/);
  });

  it('registers exactly our search attributes, with their types', () => {
    const created = [...service('temporal-setup').matchAll(/--name (\w+) --type (\w+)/g)].map((m) => [m[1], m[2]]);
    expect(Object.fromEntries(created)).toEqual(searchAttributeDefinitions);
  });

  it('runs each worker as its own service, as many processes as the stack runs by default', () => {
    const perRole = loadConfig({}).STACK_WORKERS_PER_ROLE;
    for (const role of WORKER_ROLES) {
      const text = service(`${role}-worker`);
      const script = /command: \['npm', 'run', '([\w:-]+)'\]/.exec(text)?.[1];
      expect(scripts[script!]).toBe(`tsx ${WORKER_ENTRY[role]}`);
      expect(text).toMatch(new RegExp(`replicas: ${perRole}\\b`));
    }
  });
});

interface ComposeService {
  ports?: Array<string | { host_ip?: string; published?: string | number; target: number }>;
  environment?: Record<string, string | number | null>;
}
const services = (parse(compose, { merge: true }) as { services: Record<string, ComposeService> }).services;

/** The host address a port entry publishes on: short syntax [HOST:]PUBLISHED:TARGET, or long syntax. */
function publishedOn(port: string | { host_ip?: string }): string {
  if (typeof port !== 'string') return port.host_ip ?? '0.0.0.0';
  const parts = port.replace(/\/(tcp|udp)$/, '').split(':');
  return parts.length === 3 ? parts[0]! : '0.0.0.0';
}

describe('docker-compose.yml is locked down', () => {
  it('publishes every port on the loopback address only', () => {
    const published = Object.entries(services).flatMap(([name, svc]) => (svc.ports ?? []).map((p) => [name, publishedOn(p)] as const));
    // Temporal's frontend, its Web UI, the codec server and the app: each one, none forgotten.
    expect(published.map(([name]) => name).sort()).toEqual(['codec', 'http', 'temporal', 'temporal-ui']);
    for (const [name, host] of published) expect(isLoopbackHost(host), `${name} publishes on ${host}`).toBe(true);
  });

  it('runs the app in production mode, where the codec server requires its token', () => {
    for (const name of ['workflow-worker', 'gmail-worker', 'llm-worker', 'http', 'codec', 'migrate']) {
      expect(services[name]!.environment?.['DURABLE_INBOX_MODE'], name).toBe('production');
    }
    // Compose refuses to start (`:?`) without CODEC_SERVER_TOKEN ...
    expect(services['codec']!.environment?.['CODEC_SERVER_TOKEN']).toMatch(/^\$\{CODEC_SERVER_TOKEN:\?.+\}$/);
    // ... and so would the codec server itself, with the compose file's environment.
    const env = Object.fromEntries(
      Object.entries(services['codec']!.environment!).map(([k, v]) => [k, /^\$\{/.test(String(v)) ? '' : String(v ?? '')]),
    );
    const key = Buffer.alloc(32, 7).toString('base64');
    const secrets = { PAYLOAD_ENCRYPTION_KEYS: `k1:${key}`, TOKEN_ENCRYPTION_KEY: key, APPROVALS_SECRET: 'a'.repeat(32) };
    const cfg = loadConfig({ ...env, ...secrets });
    expect(() => codecServerSettingsFromConfig(cfg)).toThrow(/^CODEC_SERVER_TOKEN: required when DURABLE_INBOX_MODE=production/);
    const token = 'codec-token-0123456789';
    expect(codecServerSettingsFromConfig(loadConfig({ ...env, ...secrets, CODEC_SERVER_TOKEN: token })).token).toBe(token);
  });
});
