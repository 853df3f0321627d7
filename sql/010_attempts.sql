-- Migration 010: the attempt history, one row per attempt.
--
-- polling_jobs_attempts  (the job table's name and "_attempts")
--   job_id       the job (a foreign key: deleting a job, by purge, by
--                retention or by the application, deletes its attempts)
--   attempt      the attempt's number, counting from 1 (a snooze or a
--                put-back does not spend it, so a number may repeat)
--   runner       the claim's token: HOST:PID:RANDOM:SEQ
--   started_at   by the server's clock: finished_at less the handler's
--                time (NULL for a lost attempt: not known)
--   finished_at  by the server's clock, when the outcome was written
--   outcome      success, retry, failed, lost, snoozed, put back,
--                timed out, cancelled
--   exit_status  an exec handler's exit status, or NULL
--   signal_no    the signal that killed it, or NULL
--   http_status  an http handler's HTTP status, or NULL
--   duration_ms  the handler's time
--   output       the tail of its output (the head of an HTTP body),
--                at most 4 KB, secrets redacted as in last_error
--
-- Each row is written in the transaction of the outcome it records (the
-- runner's, or the group's with --jobs); recovery writes "lost" (or
-- "cancelled") rows for the jobs whose runner died.  Jobs that another
-- program runs (the seed's PHP loop) have no rows; nothing else changes.
--
-- jobrun detects the table when a run starts; without it (or without
-- its grant) runs write no history and do what they did before.
-- Creating it does not touch the job table's rows: on a table of 10
-- million jobs it is as quick as on an empty one (the foreign key's
-- index is on the new, empty table).  A job table the application
-- empties with TRUNCATE must be emptied with DELETE instead, or the
-- history table dropped first: a table a foreign key refers to cannot
-- be truncated.
--
-- Apply with:  mariadb DATABASE < sql/010_attempts.sql
-- (for another table name, edit the names below), then grant it:
--   GRANT SELECT, INSERT ON DATABASE.polling_jobs_attempts TO 'jobrun'@'localhost';

CREATE TABLE IF NOT EXISTS polling_jobs_attempts (
  id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  job_id       BIGINT UNSIGNED NOT NULL,
  attempt      INT UNSIGNED NOT NULL,
  runner       VARCHAR(100) NULL,
  started_at   DATETIME(6) NULL,
  finished_at  DATETIME(6) NOT NULL,
  outcome      VARCHAR(16) NOT NULL,
  exit_status  SMALLINT NULL,
  signal_no    SMALLINT NULL,
  http_status  SMALLINT UNSIGNED NULL,
  duration_ms  BIGINT UNSIGNED NULL,
  output       TEXT NULL,
  PRIMARY KEY (id),
  KEY idx_job (job_id, id),
  CONSTRAINT polling_jobs_attempts_job FOREIGN KEY (job_id)
    REFERENCES polling_jobs (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
