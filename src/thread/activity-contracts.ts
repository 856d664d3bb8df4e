// The activities the thread workflow calls, as types: the workflow imports only these types,
// the implementations (gmail-activities.ts, llm-activities.ts, store-activities.ts) satisfy them.
import type { EmailForPrompt } from '../mail/types.js';
import type { ActionSpec, LifecycleAction } from '../actions/contracts.js';
import type { AgentProfile } from '../agent/contracts.js';
import type {
  Category,
  DecisionRecord,
  LabelNames,
  LabelRole,
  ThreadMemory,
} from './contracts.js';
import type { AgentGmailActivities, AgentLlmActivities, AgentStoreActivities } from '../agent/activity-contracts.js';
import type { ActionGmailActivities, ActionStoreActivities } from '../actions/activity-contracts.js';
import type { LearningActivities } from '../learning/activity-contracts.js';
import type { FollowUpRuleDecision } from '../rules/contracts.js';

/** One message as the classifier and the drafter see it (bodies already cut to a cap). */
export interface PromptMessage extends EmailForPrompt {
  messageId: string;
  /**
   * The sender's address (lower-cased addr-spec), read once from the parsed From header; '' when the
   * mail has no usable one. What rules match, the policy judges and the journal records: never the
   * display name, never a second parse of `from`.
   */
  sender: string;
  fromUser: boolean;
  /**
   * What a reply to this message needs (threading headers, recipients): set on the message we
   * answer, so writing the draft costs no second read of it.
   */
  replyHeaders?: ReplyHeaders;
  /** Set when the message's MIME could not be read (no body, only parse warnings): what went wrong. */
  unreadable?: string;
  /** Set when the body was read as text despite its MIME (a multipart whose boundary never appears): what was wrong. */
  bodyDefect?: string;
}

export interface ReplyHeaders {
  /** RFC 5322 Message-ID with angle brackets, or ''. */
  rfcMessageId: string;
  references: string[];
  inReplyTo: string;
  subject: string;
  recipients: { name?: string; address: string }[];
}

export interface ThreadContent {
  threadId: string;
  subject: string;
  userEmail: string;
  messages: PromptMessage[];
  /** The newest message not sent by the user, or null when the user wrote last. */
  latestInbound: PromptMessage | null;
  /**
   * What the user's rules say about latestInbound (tier one of classification), when asked for
   * (`withRules`) and there is an inbound message.
   */
  rules?: RulesVerdict;
  /**
   * What a reply to latestInbound is written with, read along with the thread so drafting needs no
   * second Gmail step. Absent when the user wrote last, or when no reply is to be written: the rules
   * decided on a category that gets none (without `withRules`, the built-in header rules called it
   * bulk or automated). gatherReplyContext fetches it if the user asks for a draft after all.
   */
  replyContext?: ReplyContext;
}

export interface ReplyContext {
  /** The user's recent replies to this sender, for tone. */
  toneExamples: string[];
  signature?: string;
}

export interface DraftRef {
  draftId: string;
  messageId: string;
  /**
   * When the draft was written (epoch ms): the message's internalDate when read back from Gmail,
   * or our clock just before the write. A SENT message after it is the user's reply.
   */
  internalDate: number;
}

export interface GmailActivities {
  /**
   * The thread with bodies cut to a cap; null when the thread no longer exists. `withRules`: with
   * the rules' verdict on its latest inbound message (Postgres), so classifying takes no step of its own.
   */
  readThread(input: { accountId: string; threadId: string; withRules?: boolean; withoutReplyContext?: boolean }): Promise<ThreadContent | null>;
  /** The user's recent replies to this sender (tone) and signature. */
  gatherReplyContext(input: { accountId: string; sender: string }): Promise<ReplyContext>;
  /**
   * Puts the reply in the thread: creates the thread's draft, or replaces the one we made
   * before, then applies the label change (Outbox on, Needs Response off). A retry looks before
   * it creates, so a retry or a restarted worker never leaves two drafts in the thread.
   */
  placeDraft(input: {
    accountId: string;
    threadId: string;
    draftId?: string;
    body: string;
    replyTo: PromptMessage;
    labels: LabelNames;
    add: LabelRole[];
    remove: LabelRole[];
  }): Promise<DraftRef>;
  /** The draft's current message and body; null when the draft no longer exists. */
  readDraft(input: { accountId: string; draftId: string }): Promise<(DraftRef & { body: string }) | null>;
  /** Adds and removes our labels on the thread; `archive` also removes INBOX. Missing labels are created. */
  changeLabels(input: {
    accountId: string;
    threadId: string;
    labels: LabelNames;
    add: LabelRole[];
    remove: LabelRole[];
    archive?: boolean;
  }): Promise<void>;
  /** Which of our labels the thread carries now; null when the thread is gone. */
  threadLabelRoles(input: { accountId: string; threadId: string; labels: LabelNames }): Promise<LabelRole[] | null>;
  /**
   * Whether the account's Gmail answers now (one cheap call): false while Gmail errs for the whole
   * account, throws only what the account wrapper waits on (a lost grant).
   */
  gmailAnswers(input: { accountId: string }): Promise<boolean>;
  /** A message the user sent in the thread after `afterMs` (epoch ms), if any. */
  findSentReply(input: { accountId: string; threadId: string; afterMs: number }): Promise<{ messageId: string; body: string } | null>;
}

export interface LlmUsage {
  model: string;
  tokensIn: number;
  tokensOut: number;
}

export type LlmClassification = LlmUsage & { category: Category; confidence: number; reason: string };
/** `lessons`: the accepted writing lessons the prompt held, as id@version (docs/learning.md). */
export type LlmDraft = LlmUsage & { body: string; lessons?: string[] };

export interface LlmActivities {
  /** Whether the message the user sent expects an answer (the follow-up's question when no rule decides). */
  expectsReply(input: { accountId: string; sent: PromptMessage; outputAttempts: number }): Promise<LlmUsage & { expectsReply: boolean; reason: string }>;
  /**
   * Tier two of classification, and the reply in the same step when the email needs one (given a
   * replyContext): two model calls, one activity. A draft that fails comes back missing, not as a
   * failure, so the classification is not paid for again: the workflow then calls writeDraft. Throws
   * (for the classification) LlmOutputInvalidError (retried) and LlmPaused (the workflow waits).
   */
  triageWithLlm(input: {
    accountId: string;
    email: PromptMessage;
    thread: PromptMessage[];
    instructions: string[];
    /** Without it, only classifies. */
    replyContext?: ReplyContext;
    /** Attempts at output that fails its schema before the failure is final. */
    outputAttempts: number;
  }): Promise<{ classification: LlmClassification; draft?: LlmDraft }>;
  /** A reply draft for the thread; with rework instructions, a revision of the previous draft. */
  writeDraft(input: {
    accountId: string;
    thread: PromptMessage[];
    toneExamples: string[];
    signature?: string;
    instructions: string[];
    reworkInstructions?: string;
    previousDraft?: string;
    outputAttempts: number;
  }): Promise<LlmDraft>;
}

export type RulesVerdict = (
  | {
      decided: true;
      category: Category;
      ruleId: string;
      reason: string;
      instructions: string[];
      /** The deciding rule's own actions; absent: the category's. */
      actions?: ActionSpec[];
      /** The deciding rule routes the thread to this agent. */
      route?: AgentProfile;
    }
  | { decided: false; instructions: string[] }
) & {
  /** What each category's mail gets for this account (category_actions). */
  categoryActions: Record<Category, ActionSpec[]>;
  /** Rules that could not be evaluated (bad pattern, missing category...), left out with the reason. */
  skipped?: string[];
  /**
   * The cold-email gate's word (src/rules/cold-email.ts): `cold`, it decided cold_outreach; `ask`,
   * the LLM got a first-contact hint; `exempt`, the sender is never gated, so an LLM's
   * cold_outreach does not hold. Absent: the gate had nothing to say (and before it existed).
   */
  coldEmail?: { gate: 'cold' | 'ask' | 'exempt'; reason: string };
};

/** What the follow-up rules say about a message the user sent; undecided: the LLM is asked. */
export type FollowUpRulesVerdict = FollowUpRuleDecision & {
  /** Rules that could not be evaluated, left out with the reason. */
  skipped?: string[];
};

export interface StoreActivities {
  /** What earlier runs of this thread left in Postgres; null for a thread never seen. */
  loadThread(input: { accountId: string; threadId: string }): Promise<ThreadMemory | null>;
  /** Upserts the thread row, appends new decisions (idempotent by run id and sequence) and journals the lifecycle's changes (by key). */
  saveThread(input: {
    accountId: string;
    threadId: string;
    workflowRunId: string;
    memory: ThreadMemory;
    closed: boolean;
    /** Decisions not saved yet, with their index in the run's decision list (the idempotency key). */
    decisions: { seq: number; decision: DecisionRecord }[];
    /** Changes the lifecycle made in Gmail (drafts, Done's archive, its labels), journaled as done. */
    journal?: LifecycleAction[];
  }): Promise<void>;
  /** Appends decisions to the log of a thread Postgres knows, leaving its row as it is (a learn-only run); idempotent like saveThread's. */
  appendDecisions(input: { accountId: string; threadId: string; workflowRunId: string; decisions: { seq: number; decision: DecisionRecord }[] }): Promise<void>;
}

export interface TimerGmailActivities {
  /** Archives the thread (a snooze starts); takes the request label off when given. False: the thread is gone. */
  snoozeThread(input: { accountId: string; threadId: string; requestLabel?: string }): Promise<boolean>;
  /** Back to the inbox, its newest message unread, with the label. False: the thread is gone. */
  returnFromSnooze(input: { accountId: string; threadId: string; label: string }): Promise<boolean>;
  /** Takes a label off the thread (a request label, once its timer is set). */
  takeLabel(input: { accountId: string; threadId: string; label: string }): Promise<void>;
}

export interface TimerStoreActivities {
  /** The follow-up rules' word on a message the user sent (its recipients, subject, body); undecided: ask the LLM. */
  followUpRules(input: { accountId: string; sent: PromptMessage }): Promise<FollowUpRulesVerdict>;
  /** `businessDays` business days after `fromMs`, in the account's zone (its weekend skipped), at the same local time. */
  followUpDueAt(input: { accountId: string; fromMs: number; businessDays: number }): Promise<number>;
  /** Whether a follow-up that falls due drafts a nudge (the account's policy, else the global one; off by default). */
  followUpNudgeAllowed(input: { accountId: string }): Promise<boolean>;
}

/**
 * What a thread run reaches on each task queue, every feature's steps it takes (the workers'
 * registries, src/workers/*-queue.ts, satisfy these): the Gmail queue's calls, the LLM queue's, and
 * the Postgres steps it runs as local activities.
 */
export type ThreadGmailSteps = GmailActivities & TimerGmailActivities & ActionGmailActivities & AgentGmailActivities;
export type ThreadLlmSteps = LlmActivities & AgentLlmActivities;
export type ThreadStoreSteps = StoreActivities & TimerStoreActivities & ActionStoreActivities & AgentStoreActivities & LearningActivities;
