-- Migration 002: resumable jobs (checkpoints) and snooze.
--
-- checkpoint  the last progress a handler saved while it ran (JSON, at most
--             65536 bytes).  jobrun stores each one at once, fenced by the
--             job's lock, and hands it back on the next attempt, so a job
--             cut off by a crash, a timeout or a deploy resumes instead of
--             starting over.
-- snoozes     how many times in a row the job asked to run again later
--             without saving new progress; jobrun bounds it ([run]
--             max_snoozes) so a handler cannot loop forever going nowhere.
--
-- jobrun detects the columns when it starts; without them it works as
-- before, with checkpoints and snooze off ("jobrun check" says so).
--
-- Apply with:  mariadb DATABASE < sql/002_checkpoint.sql
-- (for another table name, edit the name below)

ALTER TABLE polling_jobs
  ADD COLUMN checkpoint JSON NULL COMMENT 'last saved progress',
  ADD COLUMN snoozes INT UNSIGNED NOT NULL DEFAULT 0
      COMMENT 'runs in a row put off without progress';
