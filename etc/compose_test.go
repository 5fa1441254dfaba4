package etc_test

import (
	"os"
	"path"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// composeService is what the tests read of a service of deploy/docker-compose.yml (after
// YAML merge keys: `<<: *anchor`).
type composeService struct {
	Image       string            `yaml:"image"`
	Command     []string          `yaml:"command"`
	Entrypoint  yaml.Node         `yaml:"entrypoint"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	DependsOn   yaml.Node         `yaml:"depends_on"`
	Healthcheck *struct {
		Test    []string `yaml:"test"`
		Disable bool     `yaml:"disable"`
	} `yaml:"healthcheck"`
}

func loadCompose(t *testing.T) map[string]composeService {
	t.Helper()
	raw, err := os.ReadFile("../deploy/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return f.Services
}

// seckillConfig returns the deploy/multinode file a compose service runs (its `-f` file,
// mounted from ./multinode), and the binary: "" when the service runs none of the three.
func seckillConfig(t *testing.T, name string, s composeService) (bin, file string) {
	t.Helper()
	if len(s.Command) < 3 || s.Command[1] != "-f" || !strings.HasPrefix(s.Command[0], "/opt/seckill/bin/") {
		return "", ""
	}
	bin = path.Base(s.Command[0])
	if bin == "migrate" {
		return "", ""
	}
	for _, v := range s.Volumes {
		if src, dst, ok := strings.Cut(strings.TrimSuffix(v, ":ro"), ":"); ok && dst == s.Command[2] {
			if !strings.HasPrefix(src, "./multinode/") {
				t.Fatalf("%s: %s is mounted from %s, not deploy/multinode", name, dst, src)
			}
			return bin, "../deploy/" + strings.TrimPrefix(src, "./")
		}
	}
	t.Fatalf("%s: its config %s is not mounted", name, s.Command[2])
	return "", ""
}
