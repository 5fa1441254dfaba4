#!/usr/bin/env bash
# Creates the event topics on a real Kafka cluster. The relay produces with acks=all, so
# with replication 3 and min.insync.replicas 2 an acknowledged event survives one broker.
# Partitions bound the writer's parallelism: at least (mq instances x Consumer.Conns).
# Then the SCRAM users of the services and their ACLs (nothing else is allowed):
#   rpc: writes both topics (relay, dead letters), reads the writer group's offsets;
#   mq:  reads the events topic in group seckill-writer, writes the dead-letter topic.
set -euo pipefail
BOOTSTRAP=${BOOTSTRAP:-kafka-1:9092}
PARTITIONS=${PARTITIONS:-6} # multinode/topology.yaml
EVENTS=seckill-order-events
DLQ=seckill-order-events-dlq
GROUP=seckill-writer
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
kafka-configs.sh "${admin[@]}" --alter --entity-type users --entity-name rpc \
  --add-config "SCRAM-SHA-512=[password=${SECKILL_KAFKA_RPC_PASSWORD:?}]"
kafka-configs.sh "${admin[@]}" --alter --entity-type users --entity-name mq \
  --add-config "SCRAM-SHA-512=[password=${SECKILL_KAFKA_MQ_PASSWORD:?}]"
acl() { kafka-acls.sh "${admin[@]}" --add --force "$@"; }
acl --allow-principal User:rpc --operation Write --operation Describe --topic $EVENTS --topic $DLQ
acl --allow-principal User:rpc --operation Describe --topic $EVENTS --group $GROUP
acl --allow-principal User:mq --operation Read --operation Describe --topic $EVENTS
acl --allow-principal User:mq --operation Write --operation Describe --topic $DLQ
acl --allow-principal User:mq --operation Read --operation Describe --group $GROUP
