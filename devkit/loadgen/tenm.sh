#!/usr/bin/env bash
# The ten-million-buyer sale (make tenm): starts the system as `make run` does (bin/standalone,
# its private redis-server and MariaDB, Kafka in process), runs bin/loadgen against it with
# the cost readings on (Redis memory per order on that private Redis, the services' process's
# RSS at CHECKPOINT buyers and at the end, the writer's lag after the reserve phase), and
# stops the system. The reports go to OUT (report.txt, report.json, report.html,
# the launcher's banner system.out and its log system.log).
# The exit status is loadgen's: 0 every check PASS, 1 a check failed, 2 the sale could not run.
set -euo pipefail
BUYERS=${BUYERS:-10000000}
STOCK=${STOCK:-100000}
CHECKPOINT=${CHECKPOINT:-$((BUYERS / 10))}
BOUND_SECONDS=${BOUND_SECONDS:-900} # bound on the reserve phase: buyers not started by then are not sent
RETRIES=${RETRIES:-8}               # of a BUSY reservation, pay or read (the same request)
CONC=${CONC:-256}
OUT=${OUT:-bin/tenm}
BIN=${BIN:-bin}
mkdir -p "$OUT"

"$BIN/standalone" >"$OUT/system.out" 2>"$OUT/system.log" &
sys=$!
trap 'kill -INT $sys 2>/dev/null || true; wait $sys 2>/dev/null || true' EXIT
for _ in $(seq 300); do
	grep -q '^seckill is running' "$OUT/system.out" && break
	kill -0 $sys 2>/dev/null || { tail -20 "$OUT/system.log" >&2; exit 2; }
	sleep 1
done
# The launcher's banner (stdout) names the gateway, its private Redis and the secrets.
field() { sed -n "s/^  $1  *\([^ ]*\).*/\1/p" "$OUT/system.out" | head -1; }
secret() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" "$OUT/system.out" | head -1; }
url=$(field gateway)
redis=$(field redis)
[ -n "$url" ] && [ -n "$redis" ] || { echo "tenm: the system did not start (see $OUT/system.log)" >&2; exit 2; }

# The pay timeout outlasts the reserve phase and the writer's lag wait (60 s), so nothing
# expires before the settle phase (on two loaded cores paying 100,000 orders took 3-4 min);
# every order is paid, and one whose pay stayed BUSY after every retry expires (the run
# waits for it, up to about 10 minutes past the bound).
status=0
SECKILL_BUYER_SECRET=$(secret SECKILL_BUYER_SECRET) SECKILL_MERCHANT_SECRET=$(secret SECKILL_MERCHANT_SECRET) \
SECKILL_PAYMENT_SECRET=$(secret SECKILL_PAYMENT_SECRET) \
	"$BIN/loadgen" -url "$url" -buyers "$BUYERS" -stock "$STOCK" -c "$CONC" -max-duration "${BOUND_SECONDS}s" \
	-retries "$RETRIES" -pay-timeout "$((BOUND_SECONDS + 600))s" -pay 1 -cancel 0 -reconcile-wait 120s \
	-cost-redis "$redis" -cost-pids "$sys" -cost-checkpoint "$CHECKPOINT" -cost-lag-wait 60s \
	-json "$OUT/report.json" -html "$OUT/report.html" "$@" >"$OUT/report.txt" || status=$?
cat "$OUT/report.txt"
exit $status
