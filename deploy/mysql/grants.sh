#!/usr/bin/env bash
# Runs one of deploy/mysql's SQL files as root, with the users' passwords from the
# environment: $SECKILL_MYSQL_SQL, grants.sql by default. The compose file runs it twice:
# in the MySQL image's first start (docker-entrypoint-initdb.d) with migrator.sql, the
# migration user; on every start after `migrate up` (service mysql-grants, against
# $SECKILL_MYSQL_HOST) with grants.sql, the services' users.
set -euo pipefail
: "${SECKILL_MYSQL_MIGRATE_PASSWORD:?}" "${SECKILL_MYSQL_RPC_PASSWORD:?}" "${SECKILL_MYSQL_MQ_PASSWORD:?}"
: "${SECKILL_MYSQL_EXPORTER_PASSWORD:?}"
q() { printf "'%s'" "${1//\'/\'\'}"; }
mysql ${SECKILL_MYSQL_HOST:+-h "$SECKILL_MYSQL_HOST"} -uroot -p"$MYSQL_ROOT_PASSWORD" seckill <<SQL
SET @migrate = $(q "$SECKILL_MYSQL_MIGRATE_PASSWORD");
SET @rpc = $(q "$SECKILL_MYSQL_RPC_PASSWORD"), @mq = $(q "$SECKILL_MYSQL_MQ_PASSWORD");
SET @exporter = $(q "$SECKILL_MYSQL_EXPORTER_PASSWORD");
SOURCE ${SECKILL_MYSQL_SQL:-/seckill/grants.sql}
SQL
