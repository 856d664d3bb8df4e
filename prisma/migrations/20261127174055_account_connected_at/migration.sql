-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "connected_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;


-- Accounts connected before this column existed: their first connect is the best known.
UPDATE "accounts" SET "connected_at" = "created_at";
