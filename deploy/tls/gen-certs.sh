#!/usr/bin/env bash
# The certificates of the zRPC hop (gateway and writer -> inventory service), made with
# openssl by the operator, once, into OUT (default: deploy/tls/out, ignored by git):
#   ca.crt, ca.key    the CA the clients trust (api.yaml, mq.yaml InventoryTLS.CAFile);
#                     kept if it exists, so re-running renews the server certificate only.
#                     ca.key signs certificates: keep it off the service hosts.
#   rpc.crt, rpc.key  the inventory service's certificate and key (rpc.yaml TLS), valid for
#                     the names in RPC_SANS.
# The clients check the name in their InventoryTLS.ServerName (inventory.rpc): discovered
# through etcd, an instance is dialed by its address, not by a name. RPC_SANS also names
# the compose hosts (rpc-1, rpc-2) for clients that dial them directly (cmd/repair).
# No client certificates: the service authenticates its callers by app token (rpc.yaml Apps).
#
#   deploy/tls/gen-certs.sh [OUT]
#   install -m 0644 OUT/ca.crt OUT/rpc.crt /etc/seckill/tls/   # systemd hosts; compose mounts OUT
#   install -m 0600 -o seckill OUT/rpc.key /etc/seckill/tls/   # inventory hosts only
set -euo pipefail
OUT=${1:-$(dirname "$0")/out}
DAYS=${DAYS:-825}
RPC_SANS=${RPC_SANS:-DNS:inventory.rpc,DNS:rpc-1,DNS:rpc-2,DNS:localhost,IP:127.0.0.1}
mkdir -p "$OUT"
umask 077
if [ ! -s "$OUT/ca.key" ] || [ ! -s "$OUT/ca.crt" ]; then
  openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -sha256 \
    -keyout "$OUT/ca.key" -out "$OUT/ca.crt" -days "$((DAYS * 2))" -subj "/CN=seckill zRPC CA" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
fi
EXT=$(mktemp)
trap 'rm -f "$EXT" "$OUT/rpc.csr"' EXIT
cat >"$EXT" <<CONF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=$RPC_SANS
CONF
openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -sha256 \
  -keyout "$OUT/rpc.key" -out "$OUT/rpc.csr" -subj "/CN=inventory.rpc" 2>/dev/null
openssl x509 -req -in "$OUT/rpc.csr" -CA "$OUT/ca.crt" -CAkey "$OUT/ca.key" -CAcreateserial \
  -out "$OUT/rpc.crt" -days "$DAYS" -sha256 -extfile "$EXT" 2>/dev/null
chmod 0644 "$OUT/ca.crt" "$OUT/rpc.crt"
chmod 0600 "$OUT/ca.key" "$OUT/rpc.key"
openssl verify -CAfile "$OUT/ca.crt" "$OUT/rpc.crt" >/dev/null
echo "gen-certs: $OUT/ca.crt, $OUT/rpc.crt (${RPC_SANS}), $OUT/rpc.key"
