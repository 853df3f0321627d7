-- Migration 003: flow control - concurrency caps, rate limits, pause.
--
-- One row per job type, shared by every runner on every host:
--
-- type         the job type, byte for byte (VARBINARY: ORDER_SYNC is not
--              order_sync, as jobrun compares types everywhere)
-- paused       set by "jobrun pause TYPE", cleared by "jobrun resume TYPE":
--              no run starts a job of a paused type
-- tokens       the rate limit's bucket: starts saved up, refilled at the
--              type's rate by the server's clock
-- refilled_at  when the bucket was last refilled (Unix time, in microseconds)
-- claims       jobs claimed through the row (a count for people; writing
--              it is what makes concurrent claims of a capped type on two
--              Galera nodes conflict, so one of them is run again)
--
-- The table holds no slot: a capped type's slots are its jobs in
-- processing, counted when a claim is made.  jobrun detects the table at
-- start; without it, pause, resume and the keys concurrency, rate and
-- burst are not available ("jobrun check" says so).
--
-- The table's name is the job table's name followed by "_flow".
-- Apply with:  mariadb DATABASE < sql/003_flow.sql
-- (for another job table name, edit the name below)
-- then grant it to jobrun's account (README.md, Install):
--   GRANT SELECT, INSERT, UPDATE ON DATABASE.polling_jobs_flow TO 'jobrun'@'localhost';

CREATE TABLE polling_jobs_flow (
  type VARBINARY(256) NOT NULL COMMENT 'job type, byte for byte (64 characters)',
  paused TINYINT UNSIGNED NOT NULL DEFAULT 0,
  tokens DOUBLE NOT NULL DEFAULT 0 COMMENT 'rate limit: starts left',
  refilled_at DECIMAL(20,6) NOT NULL DEFAULT 0 COMMENT 'Unix time',
  claims BIGINT UNSIGNED NOT NULL DEFAULT 0,
  updated_at DATETIME NOT NULL,
  PRIMARY KEY (type)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
