// Workflow code: what the thread learns from a label change the user made in Gmail. A thread we
// archived moved back to the inbox, a label we added removed, a label we did not add put on: each
// is recorded as a correction (src/learning/corrections.ts, idempotent), and when one is new the
// account's triage lessons are derived again at once, so a proposal waits for the user as soon as
// the corrections repeat, and the user is told on Discord. Separate from the thread's steps: it changes nothing in the thread.
import { isCancellation, patched } from '@temporalio/workflow';
import { proxyNotifyActivities } from './activity-proxies.js';
import type { ThreadEvent } from './contracts.js';
import type { ThreadRun } from './thread-run.js';
import type { LessonNotifyActivities, RecordedCorrection } from '../learning/activity-contracts.js';

export async function learnFromCorrections(run: ThreadRun, event: ThreadEvent): Promise<void> {
  if (event.type !== 'labels_changed' || event.reconcile) return;
  const added = event.userLabelsAdded ?? [];
  const removed = event.userLabelsRemoved ?? [];
  if (!event.inboxAdded && added.length === 0 && removed.length === 0) return;
  // Runs recorded before corrections were learned from never saw these fields; the marker keeps them replaying.
  if (!patched('learning-corrections')) return;
  try {
    const recorded = await run.store.recordCorrections({
      ...run.ids,
      changeId: event.changeId,
      inboxAdded: event.inboxAdded === true,
      labelsAdded: added,
      labelsRemoved: removed,
    });
    if (recorded.length === 0) return;
    for (const c of recorded) run.logDecision({ kind: 'correction', source: 'user', detail: describeCorrection(c) });
    const derived = await run.store.deriveTriageLessons({ accountId: run.accountId });
    if (derived.changed.length === 0) return;
    run.logDecision({ kind: 'correction', source: 'system', detail: `lesson(s) proposed: ${derived.changed.join(', ')}` });
    // Discord, a few attempts (proxyNotifyActivities): the proposal waits on the page and in the CLI all the same.
    const notify = proxyNotifyActivities<LessonNotifyActivities>(run.settings);
    for (const lessonId of derived.changed) {
      await notify.notifyLessonProposed({ lessonId }).catch((err: unknown) => {
        if (isCancellation(err)) throw err;
        run.logDecision({ kind: 'correction', source: 'system', detail: `lesson ${lessonId} not announced on Discord: ${err instanceof Error ? err.message : String(err)}` });
      });
    }
  } catch (err) {
    if (isCancellation(err)) throw err;
    // Learning is never the thread's failure: the correction is seen again by `memory learn`.
    run.logDecision({ kind: 'correction', source: 'system', detail: `not learned from: ${err instanceof Error ? err.message : String(err)}` });
  }
}

/** What a recorded correction says, for the thread's decision log. */
function describeCorrection(c: RecordedCorrection): string {
  if (c.source === 'moved_back') return 'you moved it back to the inbox after we archived it';
  if (c.source === 'label_removed') return `you removed the label ${c.argument ?? ''} we added`;
  return `you added the label ${c.argument ?? ''}`;
}
