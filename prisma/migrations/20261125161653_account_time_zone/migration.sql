-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "time_zone" TEXT;

