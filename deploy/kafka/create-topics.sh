#!/usr/bin/env bash
# Creates the event topics on a real Kafka cluster. The relay produces with acks=all, so
# with replication 3 and min.insync.replicas 2 an acknowledged event survives one broker.
# Partitions bound the writer's parallelism: at least (mq instances x Consumer.Conns).
set -euo pipefail
BOOTSTRAP=${BOOTSTRAP:-kafka-1:9092}
PARTITIONS=${PARTITIONS:-24}
for topic in seckill-order-events seckill-order-events-dlq; do
  kafka-topics.sh --bootstrap-server "$BOOTSTRAP" --create --if-not-exists --topic "$topic" \
    --partitions "$PARTITIONS" --replication-factor 3 --config min.insync.replicas=2
done
