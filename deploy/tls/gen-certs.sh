#!/usr/bin/env bash
# The certificates of the zRPC hop (gateway and writer -> inventory service) and of etcd,
# made with openssl by the operator, once, into OUT (default: deploy/tls/out, ignored by git):
#   ca.crt, ca.key    the CA the clients trust (api.yaml, mq.yaml InventoryTLS.CAFile; every
#                     Etcd.CACertFile) and etcd trusts for client certificates;
#                     kept if it exists, so re-running renews the other certificates only.
#                     ca.key signs certificates: keep it off the service hosts.
#   rpc.crt, rpc.key  the inventory service's certificate and key (rpc.yaml TLS), valid for
#                     the names in RPC_SANS.
#   etcd.crt, etcd.key  the etcd members' certificate and key (client and peer URLs over
#                     https), valid for the names in ETCD_SANS.
#   etcd-client.crt, etcd-client.key  the services' client certificate for etcd (the Etcd
#                     blocks' CertFile, CertKeyFile: go-zero speaks TLS to etcd only with a
#                     key pair, and etcd requires one, --client-cert-auth). Its name
#                     (CN seckill-etcd-client) is no etcd user: what a service may do is its
#                     user's (Etcd.User, Pass; etcd/auth.sh).
# The clients check the name in their InventoryTLS.ServerName (inventory.rpc): discovered
# through etcd, an instance is dialed by its address, not by a name. RPC_SANS also names
# the compose hosts (rpc-1, rpc-2) for clients that dial them directly (cmd/repair).
# No client certificates: the service authenticates its callers by app token (rpc.yaml Apps).
#
#   deploy/tls/gen-certs.sh [OUT]
#   install -m 0644 OUT/ca.crt OUT/rpc.crt /etc/seckill/tls/   # systemd hosts; compose mounts OUT
#   install -m 0600 -o seckill OUT/rpc.key /etc/seckill/tls/   # inventory hosts only
#   install -m 0644 OUT/etcd-client.crt /etc/seckill/tls/; install -m 0600 -o seckill OUT/etcd-client.key \
#     /etc/seckill/tls/                                          # every service host (ca.crt too)
#   install -m 0644 OUT/ca.crt OUT/etcd.crt /etc/etcd/tls/; install -m 0600 -o etcd OUT/etcd.key /etc/etcd/tls/
set -euo pipefail
OUT=${1:-$(dirname "$0")/out}
DAYS=${DAYS:-825}
RPC_SANS=${RPC_SANS:-DNS:inventory.rpc,DNS:rpc-1,DNS:rpc-2,DNS:localhost,IP:127.0.0.1}
ETCD_SANS=${ETCD_SANS:-DNS:etcd-1,DNS:etcd-2,DNS:etcd-3,DNS:localhost,IP:127.0.0.1}
mkdir -p "$OUT"
umask 077
if [ ! -s "$OUT/ca.key" ] || [ ! -s "$OUT/ca.crt" ]; then
  openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -sha256 \
    -keyout "$OUT/ca.key" -out "$OUT/ca.crt" -days "$((DAYS * 2))" -subj "/CN=seckill zRPC CA" \
    -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
fi
EXT=$(mktemp)
trap 'rm -f "$EXT" "$OUT"/*.csr' EXIT
# sign NAME CN USAGE SANS: NAME.key and NAME.crt, signed by the CA for USAGE (extendedKeyUsage).
sign() {
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$3"
    if [ -n "$4" ]; then echo "subjectAltName=$4"; fi
  } >"$EXT"
  openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:P-256 -sha256 \
    -keyout "$OUT/$1.key" -out "$OUT/$1.csr" -subj "/CN=$2" 2>/dev/null
  openssl x509 -req -in "$OUT/$1.csr" -CA "$OUT/ca.crt" -CAkey "$OUT/ca.key" -CAcreateserial \
    -out "$OUT/$1.crt" -days "$DAYS" -sha256 -extfile "$EXT" 2>/dev/null
  chmod 0644 "$OUT/$1.crt"
  chmod 0600 "$OUT/$1.key"
  openssl verify -CAfile "$OUT/ca.crt" "$OUT/$1.crt" >/dev/null
}
sign rpc inventory.rpc serverAuth "$RPC_SANS"
# etcd's members dial each other (peer URLs) with the same certificate: client and server.
sign etcd etcd serverAuth,clientAuth "$ETCD_SANS"
sign etcd-client seckill-etcd-client clientAuth ""
chmod 0644 "$OUT/ca.crt"
chmod 0600 "$OUT/ca.key"
echo "gen-certs: $OUT/ca.crt, $OUT/rpc.crt (${RPC_SANS}), $OUT/rpc.key, $OUT/etcd.crt (${ETCD_SANS}), $OUT/etcd.key," \
  "$OUT/etcd-client.crt, $OUT/etcd-client.key"
