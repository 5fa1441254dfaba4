#!/bin/sh
# etcd auth for seckill: root (operators), rpc may write the inventory.rpc registrations,
# client may only read them (the api and mq discover the inventory service). Idempotent.
set -eu
if etcdctl --user "root:$ROOT" auth status 2>/dev/null | grep -q "Authentication Status: true"; then
  exit 0
fi
etcdctl user add "root:$ROOT"
etcdctl role add registrar
etcdctl role grant-permission registrar --prefix=true readwrite inventory.rpc
etcdctl role add discoverer
etcdctl role grant-permission discoverer --prefix=true read inventory.rpc
etcdctl user add "rpc:$RPC"
etcdctl user grant-role rpc registrar
etcdctl user add "client:$CLIENT"
etcdctl user grant-role client discoverer
etcdctl auth enable
