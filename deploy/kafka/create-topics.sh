#!/usr/bin/env bash
# Creates the event topics on a real Kafka cluster. The relay produces with acks=all, so
# with replication 3 and min.insync.replicas 2 an acknowledged event survives one broker.
# Partitions bound the writer's parallelism: at least (mq instances x Consumer.Conns).
# Then the SCRAM users of kafka/users.txt and the ACLs of kafka/acls.txt (nothing else is
# allowed).
set -euo pipefail
BOOTSTRAP=${BOOTSTRAP:-kafka-1:9092}
PARTITIONS=${PARTITIONS:-6} # multinode/topology.yaml
EVENTS=seckill-order-events
DLQ=seckill-order-events-dlq
ADMIN=$(mktemp)
trap 'rm -f "$ADMIN"' EXIT
cat >"$ADMIN" <<CONF
security.protocol=SASL_PLAINTEXT
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="${SECKILL_KAFKA_ADMIN_PASSWORD:?}";
CONF
admin=(--bootstrap-server "$BOOTSTRAP" --command-config "$ADMIN")
for topic in $EVENTS $DLQ; do
  kafka-topics.sh "${admin[@]}" --create --if-not-exists --topic "$topic" \
    --partitions "$PARTITIONS" --replication-factor 3 --config min.insync.replicas=2
done
# The SCRAM users (kafka/users.txt; admin's own was made when the brokers formatted their
# storage) and the ACLs (kafka/acls.txt): the same files the brokers and the tests read.
KAFKA_DIR=${KAFKA_DIR:-$(dirname "$0")}
while read -r name var _; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  kafka-configs.sh "${admin[@]}" --alter --entity-type users --entity-name "$name" \
    --add-config "SCRAM-SHA-512=[password=${!var:?$var is not set}]" </dev/null
done <"$KAFKA_DIR/users.txt"
while read -r user op type name _; do
  [[ -z "$user" || "$user" == \#* ]] && continue
  kafka-acls.sh "${admin[@]}" --add --force --allow-principal "User:$user" --operation "$op" "--$type" "$name" </dev/null
done <"$KAFKA_DIR/acls.txt"
