-- CreateTable
CREATE TABLE "llm_batches" (
    "batch_key" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "batch_id" TEXT,
    "submitting_since" TIMESTAMPTZ(3),
    "collected_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "llm_batches_pkey" PRIMARY KEY ("batch_key")
);

-- CreateTable
CREATE TABLE "llm_batch_requests" (
    "batch_key" TEXT NOT NULL,
    "custom_id" TEXT NOT NULL,
    "thread_id" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "prompt" JSONB,
    "result_type" TEXT,
    "classification" JSONB,
    "error" TEXT,

    CONSTRAINT "llm_batch_requests_pkey" PRIMARY KEY ("batch_key","custom_id")
);

-- AddForeignKey
ALTER TABLE "llm_batches" ADD CONSTRAINT "llm_batches_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "llm_batch_requests" ADD CONSTRAINT "llm_batch_requests_batch_key_fkey" FOREIGN KEY ("batch_key") REFERENCES "llm_batches"("batch_key") ON DELETE CASCADE ON UPDATE CASCADE;

