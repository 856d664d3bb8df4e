-- CreateTable
CREATE TABLE "llm_breakers" (
    "account_id" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'closed',
    "reason" TEXT,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "opened_at" TIMESTAMPTZ(3),
    "next_probe_at" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "llm_breakers_pkey" PRIMARY KEY ("account_id")
);

-- AddForeignKey
ALTER TABLE "llm_breakers" ADD CONSTRAINT "llm_breakers_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

