// The one exception to the one-click client's address checks, for tests and benches: a single
// loopback origin (https://127.0.0.1:<port>) whose self-signed certificate is trusted. Nothing in the
// environment or the settings can produce one (src/config has no such setting), and the lint
// (.dependency-cruiser.cjs, rule test-allowance-only-outside-src) lets only test/ and bench/ import
// this module: production code cannot enable it.
import { RequestFilteringHttpsAgent } from 'request-filtering-agent';

export interface TestOnlyAllowance {
  readonly kind: 'test-only-loopback-allowance';
  readonly port: number;
  /** The PEM certificate the loopback server presents. */
  readonly ca: string;
}

export function testOnlyLoopbackAllowance(port: number, ca: string): TestOnlyAllowance {
  if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`not a port: ${port}`);
  return { kind: 'test-only-loopback-allowance', port, ca };
}

/** The agent for the allowed origin only: 127.0.0.1 and that port, by IP literal; a name never matches. */
export function allowanceFor(allowance: TestOnlyAllowance) {
  return {
    agent: new RequestFilteringHttpsAgent({ keepAlive: false, allowIPAddressList: ['127.0.0.1'], ca: allowance.ca }),
    covers: (url: URL) => url.protocol === 'https:' && url.hostname === '127.0.0.1' && Number(url.port) === allowance.port,
  };
}
