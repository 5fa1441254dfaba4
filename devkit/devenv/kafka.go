package devenv

import (
	"fmt"
	"net"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/seckill/seckill/internal/event"
)

// Kafka is an in-process Kafka-protocol broker (franz-go's kfake) with the event topics
// created.
type Kafka struct {
	Cluster *kfake.Cluster
	Addrs   []string // seed brokers
}

// StartKafka starts a one-broker kfake cluster listening on addr ("" or a :0 port: a free
// loopback port) with event.Topic and event.DeadLetterTopic seeded with partitions
// partitions each. With dataDir set, the broker keeps its log there and reloads it on the
// next start (the topics are seeded only on the first); without it, data lives in memory.
// extra adds kfake options (SASL: kfake.EnableSASL, kfake.Superuser).
func StartKafka(addr, dataDir string, partitions int, extra ...kfake.Opt) (*Kafka, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if partitions < 1 {
		partitions = 1
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("kafka listen address %q: %w", addr, err)
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.SeedTopics(int32(partitions), event.Topic, event.DeadLetterTopic),
		kfake.DefaultNumPartitions(partitions),
		// kfake always asks for 127.0.0.1:<port>; listen where we were told instead.
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, addr) }),
	}
	if dataDir != "" {
		opts = append(opts, kfake.DataDir(dataDir))
	}
	opts = append(opts, extra...)
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("start kafka (kfake) on %s: %w", addr, err)
	}
	return &Kafka{Cluster: c, Addrs: c.ListenAddrs()}, nil
}

// Close stops the broker (persisting its state when it has a data directory).
func (k *Kafka) Close() error {
	k.Cluster.Close()
	return nil
}
