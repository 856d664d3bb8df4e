-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "lesson_auto_accept_after" INTEGER;

-- CreateTable
CREATE TABLE "learning_corrections" (
    "id" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "gmail_thread_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "change_id" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "argument" TEXT,
    "action_id" TEXT,
    "sender" TEXT NOT NULL,
    "subject" TEXT NOT NULL DEFAULT '',
    "category" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "learning_corrections_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "learning_corrections_account_id_created_at_idx" ON "learning_corrections"("account_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "learning_corrections_account_id_key_key" ON "learning_corrections"("account_id", "key");

-- AddForeignKey
ALTER TABLE "learning_corrections" ADD CONSTRAINT "learning_corrections_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
