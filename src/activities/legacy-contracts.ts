// Activities that only thread workflow runs started before v2 still call (legacy-v1.ts). They stay
// registered until no such run is open; new code uses placeDraft and triageWithLlm.
import type { GmailActivities, LlmActivities, LlmClassification, PromptMessage, DraftRef } from './thread-contracts.js';

export interface LegacyGmailActivities extends Omit<GmailActivities, 'placeDraft'> {
  /** placeDraft without the label change (v1 labelled in a separate step). */
  upsertDraft(input: { accountId: string; threadId: string; draftId?: string; body: string; replyTo: PromptMessage }): Promise<DraftRef>;
}

export interface LegacyLlmActivities extends Omit<LlmActivities, 'triageWithLlm'> {
  /** Classification alone (v1 drafted in a separate step). */
  classifyWithLlm(input: {
    accountId: string;
    email: PromptMessage;
    thread: PromptMessage[];
    instructions: string[];
    outputAttempts: number;
  }): Promise<LlmClassification>;
}
