package faults

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/seckill/seckill/devkit/devenv"
)

// The overlay reads deploy/'s own files: the compose file's Redis ACL rules (every
// service's user, the default user off, passwords from the environment), the SQL renamed
// and nothing else, and prometheus.yml's targets replaced by instance name.
func TestOverlayReadsDeploy(t *testing.T) {
	for _, k := range deploySecrets {
		t.Setenv("SECKILL_"+k, "pw-"+strings.ToLower(k))
	}
	args, err := redisACLArgs("../../deploy/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(args, " ")
	for _, want := range []string{"--user default off", "--user rpc on >pw-redis_rpc_password",
		"--user api on >pw-redis_api_password", "--user mq on >pw-redis_mq_password", "--masteruser admin"} {
		if !strings.Contains(joined, want) {
			t.Errorf("x-redis args lack %q: %s", want, joined)
		}
	}
	if strings.Contains(joined, "${") {
		t.Errorf("unexpanded variable: %s", joined)
	}
	in := "GRANT SELECT ON `seckill`.`activity` TO 'seckill_rpc'@'%';\nSET @q = 'ALTER USER ''seckill_mq''@''%''';"
	want := "GRANT SELECT ON `db1`.`activity` TO 'seckill_rpc_x'@'%';\nSET @q = 'ALTER USER ''seckill_mq_x''@''%''';"
	if got := overlaySQL(in, "db1", "x"); got != want {
		t.Errorf("overlaySQL:\n%s\nwant\n%s", got, want)
	}
	dsn, err := overlayDSN("seckill_mq:pw@tcp(mysql-primary:3306)/seckill?parseTime=true", "127.0.0.1:1", "db1", "x")
	if err != nil || !strings.Contains(dsn, "seckill_mq_x:pw@tcp(127.0.0.1:1)/db1") {
		t.Errorf("overlayDSN: %s %v", dsn, err)
	}
	if _, err := devenv.KafkaAuth("../../deploy/kafka/users.txt", "../../deploy/kafka/acls.txt", "admin"); err != nil {
		t.Errorf("deploy/kafka: %v", err)
	}
}

func TestPrometheusOverlay(t *testing.T) {
	p := &prometheus{}
	inst := map[string]string{"api-1": "127.0.0.1:1", "api-2": "127.0.0.1:2", "rpc-1": "127.0.0.1:3",
		"rpc-2": "127.0.0.1:4", "mq-1": "127.0.0.1:5", "mq-2": "127.0.0.1:6", "mq-3": "127.0.0.1:7"}
	b, err := p.config("../../deploy/prometheus", inst, "127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rules   []string `yaml:"rule_files"`
		Scrapes []struct {
			Job     string `yaml:"job_name"`
			Statics []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Rules {
		if _, err := os.Stat(r); err != nil || !filepath.IsAbs(r) {
			t.Errorf("rule file %s: %v", r, err)
		}
	}
	n := 0
	for _, j := range doc.Scrapes {
		for _, sc := range j.Statics {
			for _, tg := range sc.Targets {
				n++
				if !strings.HasPrefix(tg, "127.0.0.1:") {
					t.Errorf("job %s: target %s not replaced", j.Job, tg)
				}
			}
		}
	}
	if n == 0 {
		t.Errorf("no targets:\n%s", b)
	}
	if len(p.unscraped) > 0 { // the deploy test's Prometheus row fails on them
		t.Errorf("instances of topology.yaml prometheus.yml does not name: %v", p.unscraped)
	}
	t.Logf("exporters' jobs left out: %v", p.notRun)
}
