-- The job table, exactly as seed 000 ("ThinkPHP 8 + MySQL polling jobs")
-- defines it.  jobrun works on this table unchanged, so an application that
-- already inserts into polling_jobs keeps working.  To use another name, edit
-- the name here and set [database] table in jobrun.conf.
--
-- Load with:  mariadb DATABASE < sql/schema.sql

CREATE TABLE polling_jobs (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  business_key VARCHAR(128) NOT NULL COMMENT '业务唯一键，用来防重复',
  type VARCHAR(64) NOT NULL COMMENT '任务类型',
  payload JSON NULL COMMENT '任务参数',
  status VARCHAR(20) NOT NULL DEFAULT 'pending' COMMENT 'pending, processing, success, failed',
  attempts INT UNSIGNED NOT NULL DEFAULT 0 COMMENT '已尝试次数',
  max_attempts INT UNSIGNED NOT NULL DEFAULT 5 COMMENT '最大尝试次数',
  next_run_at DATETIME NOT NULL COMMENT '下次可执行时间',
  locked_by VARCHAR(100) DEFAULT NULL COMMENT '当前领取者',
  locked_until DATETIME DEFAULT NULL COMMENT '锁过期时间',
  last_error TEXT NULL COMMENT '最后一次错误',
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  finished_at DATETIME DEFAULT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uniq_business_key (business_key),
  KEY idx_pick (status, next_run_at, id),
  KEY idx_lock (status, locked_until),
  KEY idx_type_status (type, status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
