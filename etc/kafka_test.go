package etc_test

import (
	"os"
	"strings"
	"testing"
)

// readTable reads a data file of deploy/kafka: fields per line, comments (#) and blank
// lines skipped.
func readTable(t *testing.T, file string) [][]string {
	t.Helper()
	raw, err := os.ReadFile("../deploy/kafka/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			rows = append(rows, f)
		}
	}
	return rows
}

// The broker's SCRAM users and ACLs are data files (deploy/kafka/users.txt, acls.txt) that
// the brokers' start, the init step and this test read: each service's Kafka user is
// there with the password its config takes, and may do what its config needs (the relay
// writes the events and dead letters, the writers read the events in their group); no
// principal is anonymous, no listener plaintext, and compose mounts the files where the
// scripts read them.
func TestKafkaUsersAndACLs(t *testing.T) {
	setSecrets(t)
	users := map[string]string{} // user -> password variable
	for _, r := range readTable(t, "users.txt") {
		if len(r) != 2 || !strings.HasPrefix(r[1], "SECKILL_") {
			t.Fatalf("users.txt: %v, want: name SECKILL_VARIABLE", r)
		}
		users[r[0]] = r[1]
		t.Setenv(r[1], "pw-of-"+r[0])
	}
	rc, _, mc := loadMultinode(t)
	for svc, a := range map[string][2]string{"rpc.yaml": {rc.Relay.Kafka.User, rc.Relay.Kafka.Pass},
		"mq.yaml": {mc.Kafka.User, mc.Kafka.Pass}} {
		if v, ok := users[a[0]]; !ok || a[1] != "pw-of-"+a[0] {
			t.Errorf("%s: Kafka user %q (password %q) is not users.txt's (%s)", svc, a[0], a[1], v)
		}
	}
	acls := map[string]bool{}
	for _, r := range readTable(t, "acls.txt") {
		if len(r) != 4 || (r[2] != "topic" && r[2] != "group") {
			t.Fatalf("acls.txt: %v, want: user operation topic|group name", r)
		}
		if _, ok := users[r[0]]; !ok || r[3] == "*" || strings.EqualFold(r[1], "All") {
			t.Errorf("acls.txt: %v: an unknown user, a wildcard or All", r)
		}
		acls[strings.Join(r, " ")] = true
	}
	rpcUser, mqUser := rc.Relay.Kafka.User, mc.Kafka.User
	for _, need := range []string{
		rpcUser + " Write topic " + rc.Relay.Topic, rpcUser + " Write topic " + rc.Relay.DeadLetterTopic,
		rpcUser + " Describe group " + rc.Reconcile.WriterGroup,
		mqUser + " Read topic " + mc.Consumer.Topic, mqUser + " Read group " + mc.Consumer.Group,
		mqUser + " Write topic " + mc.DeadLetter.Topic,
	} {
		if !acls[need] {
			t.Errorf("acls.txt lacks %q (deploy/multinode's configs need it)", need)
		}
	}
	checkComposeKafka(t)
}

func checkComposeKafka(t *testing.T) {
	t.Helper()
	brokers := 0
	for name, s := range loadCompose(t) {
		if !strings.HasPrefix(s.Image, "apache/kafka") {
			continue
		}
		mounted := false
		for _, v := range s.Volumes {
			mounted = mounted || v == "./kafka:/seckill/kafka:ro"
		}
		if !mounted {
			t.Errorf("%s: deploy/kafka is not mounted at /seckill/kafka", name)
		}
		env := s.Environment
		if env["KAFKA_PROCESS_ROLES"] == "" {
			continue // the init step
		}
		brokers++
		if strings.Contains(env["KAFKA_SUPER_USERS"], "ANONYMOUS") {
			t.Errorf("%s: User:ANONYMOUS is a super user", name)
		}
		for _, m := range strings.Split(env["KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"], ",") {
			if _, proto, _ := strings.Cut(m, ":"); !strings.HasPrefix(proto, "SASL_") {
				t.Errorf("%s: listener %s does not authenticate", name, m)
			}
		}
		if strings.Join(s.Command, " ") != "bash /seckill/kafka/broker.sh" {
			t.Errorf("%s: command %v: the broker does not start through kafka/broker.sh (its SCRAM users)", name, s.Command)
		}
	}
	if brokers == 0 {
		t.Error("no Kafka broker in docker-compose.yml")
	}
}
