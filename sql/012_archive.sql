-- Migration 012 (optional): an archive for retention's rows.
--
-- With [run] archive_table = polling_jobs_archive, retention moves the
-- finished rows past keep_success and keep_failed here instead of
-- deleting them: in one transaction it locks a batch of them (SELECT ...
-- FOR UPDATE, oldest first), inserts exactly those rows here and deletes
-- them from the job table, so a row is moved once, whole, or not at all,
-- however many runners keep the table at once.  When the insert fails (no
-- such table, no INSERT grant, a column missing, a trigger's error) or
-- makes the server warn (a value cut to fit a narrower column, under a
-- non-strict sql_mode) the rows stay in the job table and the run says
-- why in a warning.
--
-- The columns are the job table's: every column of schema.sql, and
-- checkpoint and snoozes (002), deadline (009) and priority (013), which
-- jobrun copies when the job table has them (it stops with "Unknown
-- column", and "jobrun check" reports it, when this table lacks one the
-- job table has: add it with the same ALTER TABLE).  An archive made by
-- an earlier version of this file lacks priority; on a job table with
-- 013 applied, add it:
--   ALTER TABLE polling_jobs_archive
--     ADD COLUMN priority SMALLINT NOT NULL DEFAULT 0;
-- The ids are the job table's, so an archived job is still found by id.
--
-- Partitioned by month on finished_at: dropping a month that is no longer
-- wanted is ALTER TABLE ... DROP PARTITION, as quick on a million rows as
-- on ten.  The job table itself cannot be partitioned so: every unique key
-- of a partitioned table must hold the partition column, and the job
-- table's UNIQUE (business_key) is what makes an enqueue idempotent.  So
-- this table has no unique key on business_key (a key may come back after
-- its job was archived, and be archived again) and its primary key is
-- (id, finished_at).  Add a partition per month ahead of time (p_future
-- catches what comes later, to be split with REORGANIZE PARTITION).
--
-- The attempt history (010) of an archived job is deleted with it, by its
-- foreign key: the archive keeps the job's last outcome (last_error,
-- attempts), not every attempt.  Nothing else changes; without this
-- table and the setting, retention deletes as before.
CREATE TABLE polling_jobs_archive (
  id BIGINT UNSIGNED NOT NULL,
  business_key VARCHAR(128) NOT NULL,
  type VARCHAR(64) NOT NULL,
  payload JSON NULL,
  status VARCHAR(20) NOT NULL,
  attempts INT UNSIGNED NOT NULL DEFAULT 0,
  max_attempts INT UNSIGNED NOT NULL DEFAULT 5,
  next_run_at DATETIME NOT NULL,
  locked_by VARCHAR(100) DEFAULT NULL,
  locked_until DATETIME DEFAULT NULL,
  last_error TEXT NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  finished_at DATETIME NOT NULL,
  checkpoint JSON NULL,
  snoozes INT UNSIGNED NOT NULL DEFAULT 0,
  deadline DATETIME NULL DEFAULT NULL,
  priority SMALLINT NOT NULL DEFAULT 0,
  PRIMARY KEY (id, finished_at),
  KEY idx_archive_key (business_key),
  KEY idx_archive_type (type, finished_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4
PARTITION BY RANGE COLUMNS (finished_at) (
  PARTITION p2026_01 VALUES LESS THAN ('2026-02-01'),
  PARTITION p2026_02 VALUES LESS THAN ('2026-03-01'),
  PARTITION p2026_03 VALUES LESS THAN ('2026-04-01'),
  PARTITION p2026_04 VALUES LESS THAN ('2026-05-01'),
  PARTITION p2026_05 VALUES LESS THAN ('2026-06-01'),
  PARTITION p2026_06 VALUES LESS THAN ('2026-07-01'),
  PARTITION p2026_07 VALUES LESS THAN ('2026-08-01'),
  PARTITION p2026_08 VALUES LESS THAN ('2026-09-01'),
  PARTITION p2026_09 VALUES LESS THAN ('2026-10-01'),
  PARTITION p2026_10 VALUES LESS THAN ('2026-11-01'),
  PARTITION p2026_11 VALUES LESS THAN ('2026-12-01'),
  PARTITION p2026_12 VALUES LESS THAN ('2027-01-01'),
  PARTITION p_future VALUES LESS THAN (MAXVALUE)
);
