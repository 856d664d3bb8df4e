-- AlterTable
ALTER TABLE "llm_batches" ADD COLUMN     "collected_lines" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "collected_pages" INTEGER NOT NULL DEFAULT 0;
