-- CreateTable
CREATE TABLE "cold_email_allowlist" (
    "account_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "cold_email_allowlist_pkey" PRIMARY KEY ("account_id","kind","value")
);

-- AddForeignKey
ALTER TABLE "cold_email_allowlist" ADD CONSTRAINT "cold_email_allowlist_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The cold-email gate's default (docs/cleanup.md): first-contact outreach is labelled, and stays in
-- the inbox unless the user's category actions say archive. A default the user changed is kept.
UPDATE "category_actions" SET "actions" = '[{"kind":"add_label","argument":"Cold Email"}]', "updated_at" = CURRENT_TIMESTAMP
WHERE "scope_ref" = '' AND "category" = 'cold_outreach' AND "actions" = '[]'::jsonb;
