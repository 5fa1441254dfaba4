-- One MySQL user per service, each with only what its statements need (model/, the
-- writer's mq/internal/writer/txn.go, the reconciler's internal/reconcile). No service
-- deletes a row or changes the schema; the gateway (api) has no MySQL user at all. The
-- schema is the migration user's (migrator.sql); goose's table goose_db_version is no
-- service's. A table grant needs its table: run this after `migrate up`, and again after
-- every migration that adds a table (it is idempotent; the compose file runs it on every
-- start, service mysql-grants). The passwords are session variables set by whoever runs it
-- (deploy/README.md); without them the ALTER USER fails (IDENTIFIED BY NULL) and nothing is
-- granted:
--
--   mysql -uroot -p -e "SET @rpc='$SECKILL_MYSQL_RPC_PASSWORD', @mq='$SECKILL_MYSQL_MQ_PASSWORD',
--     @exporter='$SECKILL_MYSQL_EXPORTER_PASSWORD';
--     SOURCE deploy/mysql/grants.sql"
--
-- devkit/opstest (TestGrantsAsTheServices) runs this file and migrator.sql on a real MariaDB
-- with one overlay only: the schema `seckill` renamed to its test database and a suffix on
-- each user name; then it runs each service's statements as that service's user.

-- The inventory service (seckill_rpc): activities (CreateActivity, the loader), the
-- inventory row and orders of degrade mode, reconciliation's Repair (stock_adjustment),
-- the opening draw's entries (read).
CREATE USER IF NOT EXISTS 'seckill_rpc'@'%';
SET @q = CONCAT('ALTER USER ''seckill_rpc''@''%'' IDENTIFIED BY ', QUOTE(@rpc));
PREPARE s FROM @q; EXECUTE s; DEALLOCATE PREPARE s;
GRANT SELECT, INSERT, UPDATE ON `seckill`.`activity` TO 'seckill_rpc'@'%';
GRANT SELECT, INSERT, UPDATE ON `seckill`.`inventory` TO 'seckill_rpc'@'%';
GRANT SELECT, INSERT, UPDATE ON `seckill`.`seckill_order` TO 'seckill_rpc'@'%';
GRANT SELECT, INSERT, UPDATE ON `seckill`.`stock_adjustment` TO 'seckill_rpc'@'%';
GRANT SELECT, INSERT ON `seckill`.`idempotency_key` TO 'seckill_rpc'@'%';
GRANT SELECT ON `seckill`.`draw_entry` TO 'seckill_rpc'@'%';

-- The writer and its jobs (seckill_mq): applies events to orders and inventory (SELECT
-- ... FOR UPDATE needs UPDATE), records adjustments and adds them to an activity's total,
-- records the draw's entries (INSERT IGNORE).
CREATE USER IF NOT EXISTS 'seckill_mq'@'%';
SET @q = CONCAT('ALTER USER ''seckill_mq''@''%'' IDENTIFIED BY ', QUOTE(@mq));
PREPARE s FROM @q; EXECUTE s; DEALLOCATE PREPARE s;
GRANT SELECT, UPDATE ON `seckill`.`activity` TO 'seckill_mq'@'%';
GRANT SELECT, INSERT, UPDATE ON `seckill`.`inventory` TO 'seckill_mq'@'%';
GRANT SELECT, INSERT, UPDATE ON `seckill`.`seckill_order` TO 'seckill_mq'@'%';
GRANT SELECT, INSERT, UPDATE ON `seckill`.`stock_adjustment` TO 'seckill_mq'@'%';
GRANT INSERT ON `seckill`.`draw_entry` TO 'seckill_mq'@'%';

-- The metrics exporter (seckill_exporter, prom/mysqld-exporter in docker-compose.yml):
-- server status, the process list and InnoDB status (PROCESS), replication status
-- (REPLICATION CLIENT), performance_schema's summaries (SELECT); no table of `seckill`.
-- Three connections at most, so that a slow scrape cannot crowd the services out.
CREATE USER IF NOT EXISTS 'seckill_exporter'@'%';
SET @q = CONCAT('ALTER USER ''seckill_exporter''@''%'' IDENTIFIED BY ', QUOTE(@exporter),
  ' WITH MAX_USER_CONNECTIONS 3');
PREPARE s FROM @q; EXECUTE s; DEALLOCATE PREPARE s;
GRANT PROCESS, REPLICATION CLIENT ON *.* TO 'seckill_exporter'@'%';
GRANT SELECT ON `performance_schema`.* TO 'seckill_exporter'@'%';
