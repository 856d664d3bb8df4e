// Task queues, one worker entrypoint each (src/workers). Gmail and LLM calls get their own
// queues so each can be rate-limited on its own terms (Gmail quota vs. LLM tokens).
// These are the defaults; TEMPORAL_TASK_QUEUE, GMAIL_TASK_QUEUE and LLM_TASK_QUEUE override them.
export const WORKFLOW_TASK_QUEUE = 'durable-inbox';
export const GMAIL_TASK_QUEUE = 'durable-inbox-gmail';
export const LLM_TASK_QUEUE = 'durable-inbox-llm';
