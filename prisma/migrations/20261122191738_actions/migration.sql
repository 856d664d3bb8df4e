-- CreateEnum
CREATE TYPE "action_state" AS ENUM ('queued', 'awaiting_approval', 'approved', 'scheduled', 'done', 'failed', 'refused', 'rejected', 'expired', 'undone');

-- AlterTable
ALTER TABLE "rules" ADD COLUMN     "actions" JSONB;

-- CreateTable
CREATE TABLE "actions" (
    "id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "gmail_thread_id" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "argument" TEXT,
    "reason" JSONB NOT NULL,
    "verdict" TEXT NOT NULL,
    "because" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "state" "action_state" NOT NULL,
    "sender" TEXT NOT NULL DEFAULT '',
    "workflow_id" TEXT NOT NULL,
    "scheduled_for" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    "result" JSONB,
    "note" TEXT,
    "decided_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "done_at" TIMESTAMPTZ(3),

    CONSTRAINT "actions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "category_actions" (
    "scope_ref" TEXT NOT NULL DEFAULT '',
    "category" TEXT NOT NULL,
    "actions" JSONB NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "category_actions_pkey" PRIMARY KEY ("scope_ref","category")
);

-- CreateTable
CREATE TABLE "safety_settings" (
    "scope_ref" TEXT NOT NULL DEFAULT '',
    "settings" JSONB NOT NULL DEFAULT '{}',
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "safety_settings_pkey" PRIMARY KEY ("scope_ref")
);

-- CreateIndex
CREATE UNIQUE INDEX "actions_key_key" ON "actions"("key");

-- CreateIndex
CREATE INDEX "actions_account_id_created_at_idx" ON "actions"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "actions_account_id_gmail_thread_id_idx" ON "actions"("account_id", "gmail_thread_id");

-- CreateIndex
CREATE INDEX "actions_state_idx" ON "actions"("state");

-- AddForeignKey
ALTER TABLE "actions" ADD CONSTRAINT "actions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- The defaults (docs/actions.md): newsletters labelled and archived, automated notices marked read
-- and labelled, mail that needs a response drafted. Change them with `npm run cli -- actions defaults`.
INSERT INTO "category_actions" ("scope_ref", "category", "actions") VALUES
  ('', 'newsletter', '[{"kind":"add_label","argument":"Newsletters"},{"kind":"archive"}]'),
  ('', 'automated', '[{"kind":"mark_read"},{"kind":"add_label","argument":"Notifications"}]'),
  ('', 'needs_response', '[{"kind":"draft"}]'),
  ('', 'fyi', '[]'),
  ('', 'cold_outreach', '[]');
