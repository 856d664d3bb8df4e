// The stop list of `npm run dev` and `npm run stack`: reverse order, late starts stopped at once,
// one exit however many callers ask for it.
import { afterEach, expect, it, vi } from 'vitest';
import { StopList } from '../../src/shared/stop-list.js';
import { createLogger } from '../../src/shared/log.js';

afterEach(() => vi.restoreAllMocks());

function exitSpy() {
  return vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
}

it('stops the last started first, and keeps stopping after one stop fails', async () => {
  const exit = exitSpy();
  const stopped: string[] = [];
  const list = new StopList(createLogger('test'));
  list.push({ name: 'database', stop: async () => void stopped.push('database') });
  list.push({
    name: 'server',
    stop: async () => {
      stopped.push('server');
      throw new Error('already gone');
    },
  });
  list.push({ name: 'workers', stop: async () => void stopped.push('workers') });
  await list.exit(0);
  expect(stopped).toEqual(['workers', 'server', 'database']);
  expect(exit).toHaveBeenCalledExactlyOnceWith(0);
});

it('stops at once what starts while it is stopping (Ctrl-C during start-up), and exits once with the first code', async () => {
  const exit = exitSpy();
  const stopped: string[] = [];
  let release!: () => void;
  const list = new StopList(createLogger('test'));
  list.push({ name: 'slow', stop: () => new Promise<void>((r) => (release = () => (stopped.push('slow'), r()))) });
  const first = list.exit(0);
  expect(list.stopping).toBe(true);
  // A start-up step finishes after the signal: what it started is stopped, not kept.
  list.push({ name: 'late', stop: async () => void stopped.push('late') });
  // Another step fails because its parts are stopping: its exit(1) waits for the first.
  const second = list.exit(1);
  expect(exit).not.toHaveBeenCalled();
  release();
  await Promise.all([first, second]);
  expect(stopped.sort()).toEqual(['late', 'slow']);
  expect(exit).toHaveBeenCalledExactlyOnceWith(0);
});
