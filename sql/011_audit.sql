-- Migration 011: a record of operators' changes (jobrun audit).
--
-- jobrun retry, cancel, purge, pause, resume, enqueue --again and the
-- fan-outs (enqueue --range, --keys-from) each leave one row here, in
-- the same transaction as the change: a change whose row cannot be
-- written is not made.  A change made in batches (retry --failed,
-- purge, a fan-out of many chunks) inserts its row with the first
-- batch and adds each later batch's count in that batch's transaction,
-- so the row always says what was committed, even after a crash or a
-- signal between two batches.
--
-- at          when, by the database's clock (NOW(6), the session's zone)
-- os_user     who ran jobrun: the OS account (effective user)
-- host        where: the host name
-- db_user     the account jobrun connected as: CURRENT_USER()
-- command     the command line, argv joined by blanks, with the values of
--             --payload and --payload-template and the database password
--             (wherever it appears) written [redacted]
-- job_table   the table the command changed (the job table, or the flow
--             control table for pause and resume)
-- changed     the rows the command changed, as committed so far
--
-- Without this table every command works as before and nothing is
-- recorded; "jobrun check" says so.  With the table there but without
-- the INSERT or UPDATE grant to jobrun's account, the changes above are
-- refused (exit status 77) and nothing is changed.
--
-- Apply with:  mariadb DATABASE < sql/011_audit.sql
-- then grant it to jobrun's account (README.md, Install):
--   GRANT SELECT, INSERT, UPDATE ON DATABASE.jobrun_audit TO 'jobrun'@'localhost';

CREATE TABLE IF NOT EXISTS jobrun_audit (
  id         BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  at         DATETIME(6)     NOT NULL,
  os_user    VARCHAR(64)     NOT NULL,
  host       VARCHAR(255)    NOT NULL,
  db_user    VARCHAR(300)    NOT NULL,
  command    TEXT            NOT NULL,
  job_table  VARCHAR(64)     NOT NULL,
  changed    BIGINT UNSIGNED NOT NULL DEFAULT 0,
  PRIMARY KEY (id),
  KEY idx_at (at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
