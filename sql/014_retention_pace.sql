-- Migration 014 (optional): retention at one pace for all runners.
--
-- Without this table each run deletes its batch of old finished rows
-- ([run] keep_success and keep_failed: up to 1000 of each per rule)
-- before its first claim, so retention's pace is the pace at which runs
-- start: a cron line a minute deletes 1000 a minute, but a shell loop of
-- "jobrun --max=1", or a dozen runners started back to back, deletes as
-- fast as the server can, and every claim waits behind those DELETEs
-- (bench/RETENTION.md: a claim's p99 ten times a table's without them).
-- With it, a run deletes only when no run on this job table has taken
-- retention's turn within [run] keep_every (10 s by default): one row
-- per job table holds when the next turn is due, taken by one atomic
-- INSERT ... ON DUPLICATE KEY UPDATE, by the server's clock, so at most
-- one batch per rule and keep_every is deleted, however many runs start
-- on however many hosts.  "jobrun purge" is not paced.
--
-- job_table   the job table ([database] table)
-- next_at     when the next turn is due: Unix time, by the server's
--             clock (UNIX_TIMESTAMP(), which no session time zone or DST
--             change moves)
--
-- Apply with:  mariadb DATABASE < sql/014_retention_pace.sql
-- then grant it to jobrun's account (README.md, Install):
--   GRANT SELECT, INSERT, UPDATE ON DATABASE.jobrun_retention TO 'jobrun'@'localhost';

CREATE TABLE IF NOT EXISTS jobrun_retention (
  job_table VARCHAR(64)   NOT NULL,
  next_at   DECIMAL(20,6) NOT NULL COMMENT 'Unix time',
  PRIMARY KEY (job_table)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
