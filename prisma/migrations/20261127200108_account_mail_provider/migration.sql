-- CreateEnum
CREATE TYPE "mail_provider" AS ENUM ('gmail', 'imap');

-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "mail_servers" JSONB,
ADD COLUMN     "provider" "mail_provider" NOT NULL DEFAULT 'gmail';

