-- A Schedule names its action's workflow by the action time to the second, so two triggers in one
-- second start two runs with one workflow id: a run is its Temporal run id.
ALTER TABLE "schedule_runs" ADD COLUMN "run_id" TEXT;
UPDATE "schedule_runs" SET "run_id" = "workflow_id" WHERE "run_id" IS NULL;
ALTER TABLE "schedule_runs" ALTER COLUMN "run_id" SET NOT NULL;
DROP INDEX "schedule_runs_workflow_id_key";
CREATE UNIQUE INDEX "schedule_runs_run_id_key" ON "schedule_runs"("run_id");
CREATE INDEX "schedule_runs_workflow_id_idx" ON "schedule_runs"("workflow_id");
