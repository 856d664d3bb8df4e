-- CreateEnum
CREATE TYPE "account_status" AS ENUM ('active', 'needs_reauth', 'paused', 'disconnected');

-- CreateEnum
CREATE TYPE "decision_source" AS ENUM ('rules', 'llm', 'user', 'system');

-- CreateEnum
CREATE TYPE "rule_scope" AS ENUM ('global', 'account', 'domain', 'sender');

-- CreateEnum
CREATE TYPE "rule_kind" AS ENUM ('deterministic', 'instruction');

-- CreateTable
CREATE TABLE "accounts" (
    "id" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "status" "account_status" NOT NULL DEFAULT 'active',
    "encrypted_tokens" BYTEA,
    "history_id" TEXT,
    "watch_expiration" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "threads" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "gmail_thread_id" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "category" TEXT,
    "confidence" DOUBLE PRECISION,
    "draft_id" TEXT,
    "rework_count" INTEGER NOT NULL DEFAULT 0,
    "last_message_id" TEXT,
    "closed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "threads_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "decisions" (
    "id" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "thread_id" TEXT,
    "kind" TEXT NOT NULL,
    "source" "decision_source" NOT NULL,
    "model" TEXT,
    "tokens_in" INTEGER,
    "tokens_out" INTEGER,
    "detail" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "decisions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "rules" (
    "id" TEXT NOT NULL,
    "scope" "rule_scope" NOT NULL,
    "scope_ref" TEXT,
    "kind" "rule_kind" NOT NULL,
    "conditions" JSONB NOT NULL DEFAULT '{}',
    "action" TEXT NOT NULL,
    "instruction" TEXT,
    "priority" INTEGER NOT NULL DEFAULT 100,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "rules_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "token_usage" (
    "account_id" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "tokens_in" INTEGER NOT NULL DEFAULT 0,
    "tokens_out" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "token_usage_pkey" PRIMARY KEY ("account_id","day")
);

-- CreateTable
CREATE TABLE "push_rejections" (
    "id" BIGSERIAL NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "reason" TEXT NOT NULL,
    "detail" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "push_rejections_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "accounts_email_key" ON "accounts"("email");

-- CreateIndex
CREATE INDEX "threads_account_id_state_idx" ON "threads"("account_id", "state");

-- CreateIndex
CREATE UNIQUE INDEX "threads_account_id_gmail_thread_id_key" ON "threads"("account_id", "gmail_thread_id");

-- CreateIndex
CREATE INDEX "decisions_thread_id_created_at_idx" ON "decisions"("thread_id", "created_at");

-- CreateIndex
CREATE INDEX "decisions_account_id_created_at_idx" ON "decisions"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "rules_scope_scope_ref_idx" ON "rules"("scope", "scope_ref");

-- CreateIndex
CREATE INDEX "push_rejections_received_at_idx" ON "push_rejections"("received_at");

-- AddForeignKey
ALTER TABLE "threads" ADD CONSTRAINT "threads_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "decisions" ADD CONSTRAINT "decisions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "decisions" ADD CONSTRAINT "decisions_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "threads"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "token_usage" ADD CONSTRAINT "token_usage_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

