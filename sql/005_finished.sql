-- Migration 005: an index of when jobs finished, for "jobrun report".
--
-- The report charts the jobs finished and failed per hour over the last
-- 24 hours.  With this index those are two ranges of (status,
-- finished_at) since the first charted hour, read from the index alone
-- (type is in it): the report reads as many entries as jobs ended in the
-- last day, however many finished rows the table keeps from before.
-- Without it the report leaves the hourly charts out rather than read
-- every finished row, and "jobrun check" recommends it.  The runner does
-- not use it; the server keeps it up to date when a job finishes (one
-- more index entry per finished job).
--
-- Apply with:  mariadb DATABASE < sql/005_finished.sql
-- (for another table name, edit the name below)

ALTER TABLE polling_jobs ADD KEY idx_finished (status, finished_at, type);
