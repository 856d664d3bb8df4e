-- AlterTable
ALTER TABLE "agent_steps" ADD COLUMN     "schedule_id" TEXT,
ALTER COLUMN "gmail_thread_id" DROP NOT NULL;

-- CreateTable
CREATE TABLE "agent_schedules" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "profile" TEXT NOT NULL,
    "prompt" TEXT NOT NULL,
    "timing" JSONB NOT NULL,
    "time_zone" TEXT,
    "label" TEXT NOT NULL,
    "discord" BOOLEAN NOT NULL DEFAULT true,
    "delivery_thread_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "agent_schedules_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "schedule_runs" (
    "id" BIGSERIAL NOT NULL,
    "schedule_id" TEXT NOT NULL,
    "workflow_id" TEXT NOT NULL,
    "scheduled_at" TIMESTAMPTZ(3) NOT NULL,
    "local_slot" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "output" TEXT,
    "steps" INTEGER NOT NULL DEFAULT 0,
    "tokens_in" INTEGER NOT NULL DEFAULT 0,
    "tokens_out" INTEGER NOT NULL DEFAULT 0,
    "gmail_message_id" TEXT,
    "discord_message_id" TEXT,
    "note" TEXT,
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "schedule_runs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "agent_schedules_account_id_name_key" ON "agent_schedules"("account_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "schedule_runs_workflow_id_key" ON "schedule_runs"("workflow_id");

-- CreateIndex
CREATE INDEX "schedule_runs_schedule_id_started_at_idx" ON "schedule_runs"("schedule_id", "started_at");

-- CreateIndex
CREATE INDEX "agent_steps_schedule_id_idx" ON "agent_steps"("schedule_id");

-- AddForeignKey
ALTER TABLE "agent_schedules" ADD CONSTRAINT "agent_schedules_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "schedule_runs" ADD CONSTRAINT "schedule_runs_schedule_id_fkey" FOREIGN KEY ("schedule_id") REFERENCES "agent_schedules"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- One run per local date and time of a schedule: a wall-clock time the clocks repeat (the hour after
-- daylight saving ends) may fire twice; the second claim is recorded as a duplicate and does nothing.
CREATE UNIQUE INDEX "schedule_runs_one_per_local_slot" ON "schedule_runs"("schedule_id", "local_slot") WHERE "status" <> 'duplicate';

-- The profiles scheduled runs ship with (docs/time.md, "Schedules and reminders").
INSERT INTO "agent_profiles" ("name", "description", "instructions", "tools", "max_steps", "sends_need_approval") VALUES (
  'brief',
  'The morning brief: what needs the user today, and what the assistant did since the last brief',
  'You write the user''s brief from the facts the run gives you: threads in Action Required, approvals waiting and when they expire, drafts waiting in Outbox, threads awaiting a reply past their date, snoozed threads coming back today, and what the assistant did since the last brief. Start with what needs the user first, one line per item with its link; then a short paragraph on what was done. Search the mailbox only when the facts leave something unclear. Do not invent items; say so when a section is empty.',
  ARRAY['search_mailbox'],
  4,
  true
), (
  'digest',
  'Short summaries of the newsletters archived since the last digest',
  'You write the user''s newsletter digest from the facts the run gives you: for each newsletter archived since the last digest, one or two sentences on what it says, with its sender and link. Group them by sender when there are several from one. Do not invent items; say so when there were none.',
  ARRAY['search_mailbox'],
  4,
  true
)
ON CONFLICT ("name") DO NOTHING;
