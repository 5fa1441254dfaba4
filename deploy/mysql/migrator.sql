-- The migration user (seckill_migrate): owns the schema of `seckill`. cmd/migrate runs as
-- it (deploy/README.md, "Schema migrations"); no service does. It creates, alters and drops
-- tables and indexes, moves data when a migration has to, and keeps goose's record of the
-- applied migrations (table goose_db_version, created by the first `migrate up`): all of
-- it is in `seckill`.*, and nothing outside. Run once, before the first migration (no table
-- needs to exist), with the password as a session variable:
--
--   mysql -uroot -p -e "SET @migrate='$SECKILL_MYSQL_MIGRATE_PASSWORD'; SOURCE deploy/mysql/migrator.sql"
--
-- The services' users come after the migrations: grants.sql (a table grant needs its table).

CREATE USER IF NOT EXISTS 'seckill_migrate'@'%';
SET @q = CONCAT('ALTER USER ''seckill_migrate''@''%'' IDENTIFIED BY ', QUOTE(@migrate));
PREPARE s FROM @q; EXECUTE s; DEALLOCATE PREPARE s;
GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, DROP, INDEX, REFERENCES
  ON `seckill`.* TO 'seckill_migrate'@'%';
