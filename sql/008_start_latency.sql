-- Migration 008: start latency over the last hour, for status and report.
--
-- A job's start latency is its claim less the later of next_run_at and
-- created_at, by the server's clock (the metrics file's
-- jobrun_run_start_latency_seconds histogram).  Each run adds its
-- jobs' latencies here when it ends, per type and server minute, as
-- counts of a histogram; "jobrun status --json" and "jobrun report" read
-- the last 60 minutes' rows and give p50 and p99.  A run deletes the rows
-- over two hours old, so the table holds at most 120 rows per type.
--
-- job_table   the job table ([database] table)
-- type        the job type, byte for byte, as the run claimed it
-- minute      the server's minute the run ended in: UNIX_TIMESTAMP() DIV 60
-- le_N        jobs claimed at most N ms after they were due (cumulative)
-- jobs        all of them (the +Inf bucket)
-- sum_ms      their latencies added up
--
-- Without this table runs, status and report work as before.
--
-- Apply with:  mariadb DATABASE < sql/008_start_latency.sql
-- then grant it to jobrun's account (README.md, Install):
--   GRANT SELECT, INSERT, UPDATE, DELETE ON DATABASE.jobrun_start_latency TO 'jobrun'@'localhost';

CREATE TABLE IF NOT EXISTS jobrun_start_latency (
  job_table VARCHAR(64)    NOT NULL,
  type      VARBINARY(256) NOT NULL,
  minute    BIGINT         NOT NULL,
  le_5      BIGINT UNSIGNED NOT NULL DEFAULT 0,
  le_10     BIGINT UNSIGNED NOT NULL DEFAULT 0,
  le_25     BIGINT UNSIGNED NOT NULL DEFAULT 0,
  le_50     BIGINT UNSIGNED NOT NULL DEFAULT 0,
  le_100    BIGINT UNSIGNED NOT NULL DEFAULT 0,
  le_250    BIGINT UNSIGNED NOT NULL DEFAULT 0,
  le_500    BIGINT UNSIGNED NOT NULL DEFAULT 0,
  le_1000   BIGINT UNSIGNED NOT NULL DEFAULT 0,
  le_5000   BIGINT UNSIGNED NOT NULL DEFAULT 0,
  le_30000  BIGINT UNSIGNED NOT NULL DEFAULT 0,
  le_300000 BIGINT UNSIGNED NOT NULL DEFAULT 0,
  jobs      BIGINT UNSIGNED NOT NULL DEFAULT 0,
  sum_ms    BIGINT          NOT NULL DEFAULT 0,
  PRIMARY KEY (job_table, type, minute)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
