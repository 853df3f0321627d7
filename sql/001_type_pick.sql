-- Migration 001: an index for claims restricted to one type.
--
-- "jobrun --type=NAME" (and a runner whose configuration has a single
-- type) claims with WHERE status = 'pending' AND type = ? AND next_run_at
-- <= NOW().  On idx_pick alone that range also holds every other type's
-- due jobs, which the claim must read past; with this index it holds only
-- the wanted type's, so a claim reads a row or two however large the
-- backlog of other types.  jobrun uses the index when it exists and
-- "jobrun check" recommends it when it does not.
--
-- Apply with:  mariadb DATABASE < sql/001_type_pick.sql
-- (for another table name, edit the name below)

ALTER TABLE polling_jobs ADD KEY idx_type_pick (status, type, next_run_at, id);
