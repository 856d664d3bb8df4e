// Every test process's Temporal SDK runtime (a setup file: before the test file's first connection):
// the SDK's log at WARN, not the "Worker state changed" lines of every worker at INFO; core's at ERROR
// (tests stop servers under connected workers on purpose: its reconnect warnings are expected). The
// SDK keeps these options when it re-creates the runtime after it went idle.
import { DefaultLogger, Runtime } from '@temporalio/worker';

try {
  Runtime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } } });
} catch {
  // Installed already: an earlier test file of this process runs on it (isolate: false).
}
