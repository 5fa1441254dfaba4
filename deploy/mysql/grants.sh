#!/usr/bin/env bash
# Runs grants.sql in the MySQL image's first start (docker-entrypoint-initdb.d), with the
# services' passwords from the environment.
set -euo pipefail
: "${SECKILL_MYSQL_RPC_PASSWORD:?}" "${SECKILL_MYSQL_MQ_PASSWORD:?}"
q() { printf "'%s'" "${1//\'/\'\'}"; }
mysql -uroot -p"$MYSQL_ROOT_PASSWORD" seckill <<SQL
SET @rpc = $(q "$SECKILL_MYSQL_RPC_PASSWORD"), @mq = $(q "$SECKILL_MYSQL_MQ_PASSWORD");
SOURCE /seckill/grants.sql
SQL
