-- CreateTable
CREATE TABLE "imap_label_memory" (
    "account_id" TEXT NOT NULL,
    "folder" TEXT NOT NULL,
    "uid_validity" BIGINT NOT NULL,
    "uid" BIGINT NOT NULL,
    "message_id" TEXT NOT NULL,
    "thread_id" TEXT NOT NULL,
    "labels" TEXT[],
    "at_modseq" BIGINT NOT NULL,
    "seen_by" TEXT NOT NULL,
    "before_labels" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "before_at" BIGINT,
    "gone" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "imap_label_memory_pkey" PRIMARY KEY ("account_id","folder","uid_validity","uid")
);

-- AddForeignKey
ALTER TABLE "imap_label_memory" ADD CONSTRAINT "imap_label_memory_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
