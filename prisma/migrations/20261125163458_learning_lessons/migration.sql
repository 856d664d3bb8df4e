-- CreateEnum
CREATE TYPE "lesson_state" AS ENUM ('proposed', 'accepted', 'rejected', 'reverted');

-- CreateTable
CREATE TABLE "lessons" (
    "id" TEXT NOT NULL,
    "account_id" TEXT,
    "kind" TEXT NOT NULL,
    "scope" "rule_scope" NOT NULL,
    "scope_ref" TEXT,
    "state" "lesson_state" NOT NULL DEFAULT 'proposed',
    "version" INTEGER NOT NULL DEFAULT 1,
    "key" TEXT,
    "rule_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "lessons_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "lesson_versions" (
    "lesson_id" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "rule" JSONB NOT NULL DEFAULT '{}',
    "evidence" JSONB NOT NULL DEFAULT '[]',
    "revert_of" INTEGER,
    "created_by" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "lesson_versions_pkey" PRIMARY KEY ("lesson_id","version")
);

-- CreateTable
CREATE TABLE "lesson_events" (
    "id" BIGSERIAL NOT NULL,
    "lesson_id" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "from_state" TEXT,
    "to_state" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "decided_by" TEXT NOT NULL,
    "note" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "lesson_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "lessons_key_key" ON "lessons"("key");

-- CreateIndex
CREATE INDEX "lessons_account_id_state_idx" ON "lessons"("account_id", "state");

-- CreateIndex
CREATE INDEX "lesson_events_lesson_id_created_at_idx" ON "lesson_events"("lesson_id", "created_at");

-- AddForeignKey
ALTER TABLE "lesson_versions" ADD CONSTRAINT "lesson_versions_lesson_id_fkey" FOREIGN KEY ("lesson_id") REFERENCES "lessons"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "lesson_events" ADD CONSTRAINT "lesson_events_lesson_id_fkey" FOREIGN KEY ("lesson_id") REFERENCES "lessons"("id") ON DELETE CASCADE ON UPDATE CASCADE;

