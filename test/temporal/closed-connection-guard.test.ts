// The guard against @temporalio/client's retry timer outliving its closed connection: that one
// error, thrown from a timer, is dropped; any other uncaught error still ends the process with 1.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

function runWithGuard(thrown: string): { status: number | null; stderr: string } {
  const script = `
    import { dropRetriesAfterClose } from './src/temporal/closed-connection-guard.ts';
    dropRetriesAfterClose();
    setTimeout(() => { ${thrown} }, 1);
    setTimeout(() => console.log('still running'), 50);
  `;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stderr: result.stderr + result.stdout };
}

describe('dropRetriesAfterClose', () => {
  it("drops the client's retry on a closed channel, thrown from its timer", () => {
    const retry = `const e = new Error('Channel has been shut down'); e.stack = 'Error: Channel has been shut down\\n    at Timeout.retry (/x/node_modules/@temporalio/client/lib/grpc-retry.js:142:34)'; throw e;`;
    const { status, stderr } = runWithGuard(retry);
    expect(status).toBe(0);
    expect(stderr).toContain('still running');
  });

  it('ends the process with 1 on any other uncaught error, its stack on stderr', () => {
    const { status, stderr } = runWithGuard(`throw new Error('something else broke');`);
    expect(status).toBe(1);
    expect(stderr).toContain('something else broke');
    expect(stderr).not.toContain('still running');
  });
});
