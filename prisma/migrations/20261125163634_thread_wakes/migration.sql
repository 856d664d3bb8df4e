-- AlterTable
ALTER TABLE "threads" ADD COLUMN     "wake_at" TIMESTAMPTZ(3),
ADD COLUMN     "wakes" JSONB;

-- CreateIndex
CREATE INDEX "threads_account_id_wake_at_idx" ON "threads"("account_id", "wake_at");

