-- AlterTable
ALTER TABLE "actions" ADD COLUMN     "recipients" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "subject" TEXT NOT NULL DEFAULT '';

