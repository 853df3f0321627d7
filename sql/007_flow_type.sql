-- Migration 007: the control table's type holds every type name.
--
-- A job type is up to 64 characters, and a character of utf8mb4 up to 4
-- bytes; sql/003_flow.sql made the control table's type VARBINARY(64), 64
-- bytes, so "jobrun pause" of a 40-character accented type, or the first
-- claim of such a type with a limit, was refused ("Data too long").
-- sql/003_flow.sql now makes it VARBINARY(256); this widens a table made
-- before.  "jobrun check" says when it is needed.
--
-- Apply with:  mariadb DATABASE < sql/007_flow_type.sql
-- (for another job table name, edit the name below)

ALTER TABLE polling_jobs_flow MODIFY type VARBINARY(256) NOT NULL
  COMMENT 'job type, byte for byte';
