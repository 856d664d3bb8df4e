-- CreateTable
CREATE TABLE "writing_evidence" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "gmail_thread_id" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "sender" TEXT NOT NULL,
    "subject" TEXT NOT NULL DEFAULT '',
    "draft" TEXT NOT NULL,
    "final" TEXT NOT NULL,
    "edited" BOOLEAN NOT NULL,
    "diff" JSONB NOT NULL DEFAULT '{}',
    "learned_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "writing_evidence_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "writing_evidence_key_key" ON "writing_evidence"("key");

-- CreateIndex
CREATE INDEX "writing_evidence_account_id_created_at_idx" ON "writing_evidence"("account_id", "created_at");

-- CreateIndex
CREATE INDEX "writing_evidence_created_at_idx" ON "writing_evidence"("created_at");
