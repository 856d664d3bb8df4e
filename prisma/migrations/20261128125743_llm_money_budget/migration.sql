-- AlterTable
ALTER TABLE "token_usage" ADD COLUMN     "cost_usd" DOUBLE PRECISION NOT NULL DEFAULT 0;

