package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/seckill/seckill/internal/event"
)

// kafkaCheck: the broker enforces deploy/kafka's users and ACLs. A client without SASL
// and one with a wrong password get nothing; mq (acls.txt: it reads the events, writes dead
// letters) may not write the events topic; rpc writes it (the sale's events reached the
// writers). Nothing is written: the refused writes are the ones tried.
func (s *System) kafkaCheck(ctx context.Context) Check {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var bad []string
	try := func(what string, opts []kgo.Opt, probe func(context.Context, *kgo.Client) error, refused func(error) bool) {
		cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers(s.KafkaAddr), kgo.RequestRetries(1),
			kgo.RetryTimeout(3*time.Second), kgo.RecordRetries(1))...)
		if err != nil {
			bad = append(bad, what+": "+err.Error())
			return
		}
		defer cl.Close()
		pctx, pcancel := context.WithTimeout(ctx, 8*time.Second)
		defer pcancel()
		if err := probe(pctx, cl); !refused(err) {
			bad = append(bad, fmt.Sprintf("%s: not refused (%v)", what, err))
		}
	}
	ping := func(ctx context.Context, cl *kgo.Client) error { return cl.Ping(ctx) }
	anyErr := func(err error) bool { return err != nil }
	try("no SASL", nil, ping, anyErr)
	try("mq with a wrong password", []kgo.Opt{saslOpt("mq", "wrong")}, ping, anyErr)
	produce := func(ctx context.Context, cl *kgo.Client) error {
		return cl.ProduceSync(ctx, &kgo.Record{Topic: event.Topic, Value: []byte("deploy-test probe")}).FirstErr()
	}
	try("mq writing "+event.Topic, []kgo.Opt{saslOpt("mq", os.Getenv("SECKILL_KAFKA_MQ_PASSWORD"))}, produce,
		func(err error) bool { return errors.Is(err, kerr.TopicAuthorizationFailed) })
	return check("Kafka: deploy/kafka's SCRAM users and ACLs enforced", len(bad) == 0,
		"refused: a client without SASL, mq with a wrong password, mq writing %s (acls.txt); rpc wrote the "+
			"sale's events%s", event.Topic, reasons(bad))
}

func saslOpt(user, pass string) kgo.Opt {
	return kgo.SASL(scram.Auth{User: user, Pass: pass}.AsSha512Mechanism())
}

// kafkaACLs is the ACL file the broker runs with: deploy/kafka/acls.txt, or (Break
// "kafka-acl") a copy in dir with mq also allowed to write the events topic.
func (d *Deployment) kafkaACLs(file, dir string) (string, error) {
	if d.Break != "kafka-acl" {
		return file, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "acls-broken.txt")
	return out, os.WriteFile(out, append(b, []byte("mq Write topic "+event.Topic+"\n")...), 0o600)
}
