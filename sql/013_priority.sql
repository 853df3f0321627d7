-- Migration 013: priorities.
--
-- priority  a SMALLINT, default 0; higher is claimed first.  A due job
--           of priority 10 is claimed before a due job of 0, however
--           long that one has waited, but for one claim in ten, which
--           takes the job that has waited longest whatever its level:
--           a steady flood of high-priority work slows lower levels
--           down, it never stops them (jobrun(7), "Priorities").
--           "jobrun enqueue --priority=N" and [type.NAME] priority set
--           it; an application may write it in its own INSERT.
--
-- The two indexes keep the claim to a look or two per level, with the
-- levels in the claim's order: idx_priority_pick for a run of several
-- types, idx_type_priority for a run of one (as sql/001's idx_type_pick).
-- Their priority is a descending key part (MariaDB 10.8 and later, MySQL
-- 8.0 and later; an older server ignores DESC, and "jobrun check" says
-- the index then cannot give the claim's order).
--
-- jobrun detects the column and the indexes when it starts; without them
-- everything works as before and enqueue --priority says to apply this
-- file.  While every pending job has the same priority, claims are the
-- same statements as without the column.
--
-- The column is added in place; InnoDB builds the indexes online: reads
-- and writes go on while it reads every row of the table.
--
-- Apply with:  mariadb DATABASE < sql/013_priority.sql
-- (for another table name, edit the name below)

ALTER TABLE polling_jobs
  ADD COLUMN priority SMALLINT NOT NULL DEFAULT 0
      COMMENT 'higher is claimed first',
  ALGORITHM=INSTANT;

ALTER TABLE polling_jobs
  ADD KEY idx_priority_pick (status, priority DESC, next_run_at, id),
  ADD KEY idx_type_priority (status, type, priority DESC, next_run_at, id);
