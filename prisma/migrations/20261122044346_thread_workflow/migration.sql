-- AlterTable
ALTER TABLE "threads" ADD COLUMN     "draft_created_at" TIMESTAMPTZ(3),
ADD COLUMN     "draft_message_id" TEXT,
ADD COLUMN     "handled_message_ids" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "last_run_id" TEXT;

-- AlterTable
ALTER TABLE "decisions" ADD COLUMN     "run_id" TEXT,
ADD COLUMN     "seq" INTEGER;

-- CreateIndex
CREATE UNIQUE INDEX "decisions_run_id_seq_key" ON "decisions"("run_id", "seq");

