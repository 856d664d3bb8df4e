-- AlterTable
ALTER TABLE "lesson_versions" ADD COLUMN     "typed" JSONB;

