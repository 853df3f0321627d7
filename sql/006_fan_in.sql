-- Migration 006: fan-in ("jobrun enqueue --range ... --then=TYPE").
--
-- jobrun_fan_ins      one row per fan-in: the job it enqueues once every
--                     member has finished (then_type, then_key, a UNIQUE
--                     business key, so the callback can exist only once),
--                     how many members it has (total) and how many have
--                     finished so far (succeeded, failed); fired_at is set
--                     in the same transaction that enqueues the callback.
-- jobrun_fan_in_jobs  the members: one row per job of the fan-out, with
--                     its outcome once it has finished (counted once).
--
-- jobrun detects the tables when a run starts; without them, --then is
-- refused and runs do no fan-in work.
--
-- Apply with:  mariadb DATABASE < sql/006_fan_in.sql
-- then grant them to jobrun's account (README.md, Install):
--   GRANT SELECT, INSERT, UPDATE ON DATABASE.jobrun_fan_ins TO 'jobrun'@'localhost';
--   GRANT SELECT, INSERT, UPDATE ON DATABASE.jobrun_fan_in_jobs TO 'jobrun'@'localhost';

CREATE TABLE IF NOT EXISTS jobrun_fan_ins (
  id            BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  job_table     VARCHAR(64)  NOT NULL,
  then_type     VARCHAR(64)  NOT NULL,
  then_key      VARCHAR(128) NOT NULL,
  then_payload  LONGTEXT     NULL,
  total         BIGINT UNSIGNED NOT NULL,
  succeeded     BIGINT UNSIGNED NOT NULL DEFAULT 0,
  failed        BIGINT UNSIGNED NOT NULL DEFAULT 0,
  fired_at      DATETIME     NULL,
  created_at    DATETIME     NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_then (job_table, then_key),
  KEY idx_open (job_table, fired_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS jobrun_fan_in_jobs (
  job_id        BIGINT UNSIGNED NOT NULL,
  fan_in_id     BIGINT UNSIGNED NOT NULL,
  outcome       VARCHAR(16)  NULL,
  PRIMARY KEY (job_id, fan_in_id),
  KEY idx_fan_in (fan_in_id, outcome)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
