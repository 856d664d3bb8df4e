// Workflow code: a thread's wait while its account's LLM is paused (the breaker, src/llm/breaker.ts).
// An LLM activity that finds the breaker open fails fast with LlmPaused; the call then waits on a
// durable timer (until the breaker's next probe, or the next UTC day for a spent budget) or for the
// llmResumed signal (`accounts llm-resume`), and runs again. The thread stays open and is never
// given up; the search attribute InboxLlmPaused and the status query say why it waits.
import { condition, defineSignal, log, setHandler } from '@temporalio/workflow';
import { runningAgainAfter } from '../temporal/waiting-proxy.js';
import { activityError } from '../temporal/workflow-failures.js';
import { LLM_PAUSED_TYPE, pauseWakeAt, type LlmPausedDetails, type LlmPauseReason } from '../llm/breaker.js';

/** Sent to an account's thread workflows when an operator resumes its LLM (`accounts llm-resume`). */
export const llmResumedSignal = defineSignal('llmResumed');

/** The LlmPaused failure's details, when the activity failed because the account's LLM is paused. */
export function llmPausedBy(err: unknown): LlmPausedDetails | undefined {
  const cause = activityError(err);
  if (cause?.type !== LLM_PAUSED_TYPE) return undefined;
  const details = cause.details?.[0] as Partial<LlmPausedDetails> | undefined;
  return { reason: details?.reason ?? 'outage', resumeAt: details?.resumeAt ?? '', lastError: details?.lastError ?? null };
}

export class LlmPause {
  private resumed = false;
  /** While a call waits for the LLM: why. */
  waitingFor: string | undefined;

  /** `show` puts the reason in the search attribute (null clears it). */
  constructor(private readonly show: (reason: LlmPauseReason | null) => void) {
    setHandler(llmResumedSignal, () => {
      this.resumed = true;
    });
  }

  /** Waits for the wake time the pause gives (at least a second), or the resume signal. */
  async wait(step: string, paused: LlmPausedDetails): Promise<void> {
    const wakeAt = pauseWakeAt(paused, Date.now());
    log.warn('LLM paused: waiting', { step, reason: paused.reason, until: new Date(wakeAt).toISOString() });
    this.waitingFor = `${step}: LLM paused (${paused.reason}) until ${new Date(wakeAt).toISOString()}`;
    this.show(paused.reason);
    this.resumed = false;
    await condition(() => this.resumed, Math.max(1000, wakeAt - Date.now()));
    this.resumed = false;
    this.waitingFor = undefined;
  }

  /** The call ran: the attribute goes when it was set. */
  clear(): void {
    this.show(null);
  }
}

/** The LLM activities, every call waiting while the account's LLM is paused and running again when the pause ends. */
export function waitingWhileLlmPaused<T extends object>(activities: T, pause: Pick<LlmPause, 'wait' | 'clear'>): T {
  return runningAgainAfter(
    activities,
    async (step, err) => {
      const paused = llmPausedBy(err);
      if (!paused) return false;
      await pause.wait(step, paused);
      return true;
    },
    () => pause.clear(),
  );
}
