-- AlterTable
ALTER TABLE "rules" ADD COLUMN     "route" TEXT;

-- CreateTable
CREATE TABLE "agent_profiles" (
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "instructions" TEXT NOT NULL,
    "tools" TEXT[],
    "max_steps" INTEGER NOT NULL DEFAULT 8,
    "model" TEXT,
    "sends_need_approval" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "agent_profiles_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "agent_steps" (
    "id" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "gmail_thread_id" TEXT NOT NULL,
    "run_key" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "profile" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "input" JSONB,
    "result" JSONB,
    "status" TEXT NOT NULL,
    "tokens_in" INTEGER,
    "tokens_out" INTEGER,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "agent_steps_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "agent_steps_account_id_gmail_thread_id_idx" ON "agent_steps"("account_id", "gmail_thread_id");

-- CreateIndex
CREATE UNIQUE INDEX "agent_steps_run_key_seq_key" ON "agent_steps"("run_key", "seq");


-- The example profile (docs/agent.md): answers routine scheduling questions the way the user did before.
INSERT INTO "agent_profiles" ("name", "description", "instructions", "tools", "max_steps", "sends_need_approval") VALUES (
  'scheduling',
  'Answers routine scheduling questions (moving a call, proposing a time) from the user''s earlier replies',
  'You handle routine scheduling mail for the user. Read the thread, look at how the user answered this sender before (sender_history, search_mailbox), then write a short reply in the user''s voice that proposes or confirms a time. Send it with send_reply when it only confirms or proposes a time the user already offered; otherwise write it as a draft with write_draft. If the mail asks for anything other than scheduling, or you are unsure, escalate to the user with your reason.',
  ARRAY['read_thread', 'search_mailbox', 'sender_history', 'write_draft', 'send_reply', 'add_label', 'archive', 'escalate'],
  8,
  true
);
