-- Migration 004: recurring jobs ([schedule.NAME] in jobrun.conf).
--
-- One row per schedule and job table: the latest slot whose job jobrun
-- has enqueued.  The job table's UNIQUE business_key ("NAME@YYYY-MM-DDTHH:MM")
-- already makes each slot's job exist once across hosts and overlapping
-- runs; this row is what keeps a slot from running again once its job is
-- purged ("jobrun purge"), and its lock serialises the runners that
-- enqueue the same schedule at the same moment.
--
-- job_table      the job table the schedule enqueues into ([database] table)
-- name           the schedule's NAME
-- last_slot_utc  the latest enqueued slot, as Unix seconds (real time)
-- last_slot      the same slot as the schedule's wall clock showed it
-- updated_at     when a runner last enqueued a slot of it (session zone)
--
-- jobrun detects the table when it starts; a configuration with schedules
-- and no table stops the run before it claims ("jobrun check" says so).
--
-- Apply with:  mariadb DATABASE < sql/004_schedules.sql
-- then grant it to jobrun's account (README.md, Install):
--   GRANT SELECT, INSERT, UPDATE ON DATABASE.jobrun_schedules TO 'jobrun'@'localhost';

CREATE TABLE IF NOT EXISTS jobrun_schedules (
  job_table     VARCHAR(64)  NOT NULL,
  name          VARCHAR(64)  NOT NULL,
  last_slot_utc BIGINT       NOT NULL,
  last_slot     DATETIME     NULL,
  updated_at    DATETIME     NOT NULL,
  PRIMARY KEY (job_table, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
