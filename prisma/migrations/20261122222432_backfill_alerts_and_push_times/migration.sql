-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "last_history_at" TIMESTAMPTZ(3),
ADD COLUMN     "last_push_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "backfill_state" ADD COLUMN     "backfill_id" TEXT;

-- CreateTable
CREATE TABLE "backfill_alerts" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "backfill_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "level" TEXT NOT NULL,
    "detail" TEXT NOT NULL,
    "measured" JSONB NOT NULL DEFAULT '{}',
    "raised_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "delivered_at" TIMESTAMPTZ(3),
    "discord_message_id" TEXT,
    "email_message_id" TEXT,
    "email_sent_at" TIMESTAMPTZ(3),
    "delivery_notes" TEXT[] DEFAULT ARRAY[]::TEXT[],

    CONSTRAINT "backfill_alerts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "backfill_alerts_account_id_backfill_id_kind_raised_at_idx" ON "backfill_alerts"("account_id", "backfill_id", "kind", "raised_at");

-- CreateIndex
CREATE INDEX "backfill_alerts_account_id_kind_level_email_sent_at_idx" ON "backfill_alerts"("account_id", "kind", "level", "email_sent_at");

-- AddForeignKey
ALTER TABLE "backfill_alerts" ADD CONSTRAINT "backfill_alerts_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

