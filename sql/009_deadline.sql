-- Migration 009: deadlines.
--
-- deadline  the last moment the job may start, by the server's clock in
--           the session's time zone (as next_run_at).  A job claimed
--           after it is not run: it ends failed with "deadline passed",
--           and no retry starts after it either.  NULL: no deadline.
--           "jobrun enqueue --deadline=DURATION|DATETIME" sets it; an
--           application may write it in its own INSERT.
--
-- A type's deadline, counted from created_at ([type.NAME] deadline in
-- jobrun.conf), needs no migration; this column is for one job's own.
--
-- jobrun detects the column when it starts; without it everything works
-- as before, and enqueue --deadline says to apply this file.  The column
-- is added in place, without copying or locking the table
-- (ALGORITHM=INSTANT: MariaDB 10.3 and later, MySQL 8.0.12 and later),
-- however many rows it holds; a server that cannot refuses at once.
--
-- Apply with:  mariadb DATABASE < sql/009_deadline.sql
-- (for another table name, edit the name below)

ALTER TABLE polling_jobs
  ADD COLUMN deadline DATETIME NULL DEFAULT NULL
      COMMENT 'not started by then: failed, not run',
  ALGORITHM=INSTANT;
