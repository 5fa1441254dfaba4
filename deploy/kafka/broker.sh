#!/usr/bin/env bash
# A broker of the apache/kafka image, started as the image's own /etc/kafka/docker/run
# does, with one step added: the storage is formatted with the SCRAM credentials of the
# users of kafka/users.txt whose password this broker is given (admin: the brokers
# authenticate to each other as it), so that no manual step precedes the first start.
# Formatting is skipped once done (--ignore-formatted); later users come from
# kafka/create-topics.sh.
set -euo pipefail
USERS=${USERS:-/seckill/kafka/users.txt}
if [[ -z "${KAFKA_ZOOKEEPER_CONNECT-}" ]]; then
  . /etc/kafka/docker/configureDefaults
fi
/etc/kafka/docker/configure
scram=()
while read -r name var _; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  [[ -n "${!var-}" ]] && scram+=(--add-scram "SCRAM-SHA-512=[name=$name,password=${!var}]")
done <"$USERS"
[[ ${#scram[@]} -gt 0 ]] || { echo "broker.sh: no SCRAM user's password in the environment ($USERS)"; exit 1; }
/opt/kafka/bin/kafka-storage.sh format --cluster-id="$CLUSTER_ID" -c /etc/kafka/kafka.properties \
  --ignore-formatted "${scram[@]}"
exec /etc/kafka/docker/launch
