#!/bin/sh
# etcd auth for seckill: root (operators), rpc may write the inventory.rpc registrations,
# client may only read them (the api and mq discover the inventory service). Idempotent,
# also after a run that stopped half-way (compose retries it until it succeeds).
set -eu
if etcdctl --user "root:$ROOT" auth status 2>/dev/null | grep -q "Authentication Status: true"; then
  exit 0
fi
etcdctl user get root >/dev/null 2>&1 || etcdctl user add "root:$ROOT"
etcdctl role get registrar >/dev/null 2>&1 || etcdctl role add registrar
etcdctl role grant-permission registrar --prefix=true readwrite inventory.rpc
etcdctl role get discoverer >/dev/null 2>&1 || etcdctl role add discoverer
etcdctl role grant-permission discoverer --prefix=true read inventory.rpc
etcdctl user get rpc >/dev/null 2>&1 || etcdctl user add "rpc:$RPC"
etcdctl user grant-role rpc registrar
etcdctl user get client >/dev/null 2>&1 || etcdctl user add "client:$CLIENT"
etcdctl user grant-role client discoverer
etcdctl auth enable
