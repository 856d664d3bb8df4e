-- CreateTable
CREATE TABLE "messages" (
    "account_id" TEXT NOT NULL,
    "gmail_id" TEXT NOT NULL,
    "gmail_thread_id" TEXT NOT NULL,
    "rfc_message_id" TEXT,
    "label_ids" TEXT[],
    "internal_date" TIMESTAMPTZ(3) NOT NULL,
    "headers" JSONB NOT NULL DEFAULT '{}',
    "body_text" TEXT NOT NULL,
    "raw_size" INTEGER NOT NULL,
    "writes" INTEGER NOT NULL DEFAULT 1,
    "stored_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "archived_at" TIMESTAMPTZ(3),

    CONSTRAINT "messages_pkey" PRIMARY KEY ("account_id","gmail_id")
);

-- CreateTable
CREATE TABLE "bad_messages" (
    "account_id" TEXT NOT NULL,
    "gmail_id" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "first_seen" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_tried" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "tries" INTEGER NOT NULL DEFAULT 1,

    CONSTRAINT "bad_messages_pkey" PRIMARY KEY ("account_id","gmail_id")
);

-- CreateTable
CREATE TABLE "backfill_state" (
    "account_id" TEXT NOT NULL,
    "range_start" TIMESTAMPTZ(3),
    "range_end" TIMESTAMPTZ(3),
    "watermark" TIMESTAMPTZ(3),
    "granularity" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "backfill_state_pkey" PRIMARY KEY ("account_id")
);

-- CreateTable
CREATE TABLE "quota_buckets" (
    "key" TEXT NOT NULL,
    "rate" DOUBLE PRECISION NOT NULL,
    "tokens" DOUBLE PRECISION NOT NULL,
    "refilled_at" DOUBLE PRECISION NOT NULL,
    "increased_at" DOUBLE PRECISION NOT NULL,
    "decreased_at" DOUBLE PRECISION NOT NULL,
    "throttles" BIGINT NOT NULL DEFAULT 0,
    "increases" BIGINT NOT NULL DEFAULT 0,
    "decreases" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "quota_buckets_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "messages_account_id_internal_date_idx" ON "messages"("account_id", "internal_date");

-- CreateIndex
CREATE INDEX "messages_account_id_rfc_message_id_idx" ON "messages"("account_id", "rfc_message_id");

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "bad_messages" ADD CONSTRAINT "bad_messages_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "backfill_state" ADD CONSTRAINT "backfill_state_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

