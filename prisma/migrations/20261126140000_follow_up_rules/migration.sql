-- AlterEnum
ALTER TYPE "rule_kind" ADD VALUE 'follow_up';

-- AlterTable
ALTER TABLE "rules" ADD COLUMN     "follow_up_days" INTEGER;
