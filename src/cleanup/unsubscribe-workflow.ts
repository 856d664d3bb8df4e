// One unsubscribe from a sender, durably (workflow id unsubscribe/<account>/<sender>): proposed and
// judged by the safety policy, waiting for the user's approval when the policy says so (the CLI,
// the approvals page, Discord's link signal it here), then carried out as an activity retried on a
// bounded schedule, its outcome journaled either way.
import { ActivityFailure, condition, defineQuery, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { ActionStoreActivities, ApprovalNotifyActivities } from '../actions/activity-contracts.js';
import type { ActionDecisionEvent, JournaledAction } from '../actions/contracts.js';
import { actionDecisionSignal } from '../thread/signals.js';
import type { CleanupGmailActivities } from './activity-contracts.js';
import type { UnsubscribeInput, UnsubscribeStatus } from './contracts.js';

export const unsubscribeStatusQuery = defineQuery<UnsubscribeStatus>('unsubscribeStatus');

export async function unsubscribeWorkflow(input: UnsubscribeInput): Promise<UnsubscribeStatus> {
  const { settings } = input;
  const gmail = proxyActivities<CleanupGmailActivities>({
    taskQueue: input.gmailTaskQueue,
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 10 },
  });
  const perform = proxyActivities<CleanupGmailActivities>({
    taskQueue: input.gmailTaskQueue,
    startToCloseTimeout: '1 minute',
    retry: {
      initialInterval: settings.firstRetryMs,
      backoffCoefficient: 3,
      maximumInterval: settings.maxIntervalMs,
      maximumAttempts: settings.maxAttempts,
    },
  });
  const notify = proxyActivities<ApprovalNotifyActivities>({
    taskQueue: input.gmailTaskQueue,
    startToCloseTimeout: '30 seconds',
    retry: { maximumAttempts: 3 },
  });
  const store = proxyLocalActivities<ActionStoreActivities>({ startToCloseTimeout: '30 seconds', retry: { initialInterval: '1 second', maximumInterval: '1 minute' } });

  let status: UnsubscribeStatus = { state: 'proposing' };
  const decisions: ActionDecisionEvent[] = [];
  setHandler(actionDecisionSignal, (event) => void decisions.push(event));
  setHandler(unsubscribeStatusQuery, () => status);
  const show = (action: JournaledAction): UnsubscribeStatus => (status = { actionId: action.id, state: action.state, ...(action.note ? { note: action.note } : {}) });

  const proposed = await gmail.proposeUnsubscribe({
    accountId: input.accountId,
    sender: input.sender,
    reason: input.reason,
    workflowId: `unsubscribe/${input.accountId}/${input.sender}`,
    approvalExpiryMs: settings.approvalExpiryMs,
  });
  if (!proposed.action) return (status = { state: 'nothing_to_do', note: proposed.why ?? 'nothing to unsubscribe from' });
  let action = proposed.action;
  show(action);

  if (action.state === 'awaiting_approval') {
    try {
      await notify.notifyApproval({ actionId: action.id });
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err; // the approval waits on the page and the CLI all the same
    }
    const id = action.id;
    const decided = () => decisions.find((d) => d.actionId === id && d.decision !== 'undo');
    const expiresIn = action.expiresAt ? Math.max(0, Date.parse(action.expiresAt) - Date.now()) : settings.approvalExpiryMs;
    const came = await condition(() => decided() !== undefined, expiresIn);
    const decision = decided();
    const to = !came || !decision ? 'expired' : decision.decision === 'approve' ? 'approved' : 'rejected';
    const settled = await store.settleAction({ id, from: ['awaiting_approval'], to, ...(decision ? { decidedBy: decision.by } : { note: 'no decision before the approval expired' }) });
    if (!settled) return (status = { actionId: id, state: 'failed', note: 'the journal row is gone' });
    action = settled.action;
    show(action);
  }
  if (action.state !== 'queued' && action.state !== 'approved') return status;

  try {
    action = await perform.performUnsubscribe({ actionId: action.id });
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const why = err.cause?.message ?? err.message;
    const settled = await store.settleAction({ id: action.id, from: ['queued', 'approved'], to: 'failed', note: `gave up after ${settings.maxAttempts} attempts: ${why}` });
    if (settled) action = settled.action;
  }
  return show(action);
}
