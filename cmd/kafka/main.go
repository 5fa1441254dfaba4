// Command kafka runs an in-process Kafka-protocol broker (franz-go's kfake) on a TCP port,
// with the seckill event topics created, for local runs without a Kafka installation.
//
//	go run -tags no_k8s ./cmd/kafka -addr 127.0.0.1:9092 -data-dir /tmp/seckill-kafka
//
// It is a development broker: one node, no replication. With -data-dir it keeps its log on
// disk and reloads it on the next start; without it everything is lost on exit.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/internal/event"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9092", "listen address")
	dataDir := flag.String("data-dir", "", "keep the broker's log in this directory (default: in memory)")
	partitions := flag.Int("partitions", 8, "partitions of each seeded topic")
	users := flag.String("users", "", "SASL/SCRAM-SHA-512 users, deploy/kafka/users.txt's format (passwords from "+
		"the variables it names); with -acls, ACLs enforced")
	acls := flag.String("acls", "", "ACLs, deploy/kafka/acls.txt's format")
	flag.Parse()

	var opts []kfake.Opt
	if *users != "" {
		var err error
		if opts, err = devenv.KafkaAuth(*users, *acls, "admin"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	k, err := devenv.StartKafka(*addr, *dataDir, *partitions, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("kafka (kfake) listening on %v; topics %s, %s (%d partitions)\n",
		k.Addrs, event.Topic, event.DeadLetterTopic, *partitions)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	fmt.Println("stopping")
	_ = k.Close()
}
