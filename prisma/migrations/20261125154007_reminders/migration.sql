-- CreateTable
CREATE TABLE "reminders" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "rrule" TEXT NOT NULL,
    "start_local" TEXT NOT NULL,
    "time_zone" TEXT,
    "state" TEXT NOT NULL DEFAULT 'active',
    "not_before" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "next_at" TIMESTAMPTZ(3),
    "gmail_thread_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "reminders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reminder_occurrences" (
    "reminder_id" TEXT NOT NULL,
    "due_at" TIMESTAMPTZ(3) NOT NULL,
    "local_time" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'due',
    "email_message_id" TEXT,
    "discord_started_at" TIMESTAMPTZ(3),
    "discord_message_id" TEXT,
    "sent_at" TIMESTAMPTZ(3),
    "notes" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "reminder_occurrences_pkey" PRIMARY KEY ("reminder_id","due_at")
);

-- CreateIndex
CREATE INDEX "reminders_account_id_state_idx" ON "reminders"("account_id", "state");

-- AddForeignKey
ALTER TABLE "reminders" ADD CONSTRAINT "reminders_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reminder_occurrences" ADD CONSTRAINT "reminder_occurrences_reminder_id_fkey" FOREIGN KEY ("reminder_id") REFERENCES "reminders"("id") ON DELETE CASCADE ON UPDATE CASCADE;

