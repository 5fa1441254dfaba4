package standalone

import (
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// overlay reads a service's YAML config (the file its production main reads), sets the
// given dotted keys (nil deletes a key), and writes the result to out. The services then
// load out through their own LoadConfig, so the file on disk is exactly what runs and
// go-zero's defaults apply as they do in production.
func overlay(base, out string, set map[string]any) error {
	raw, err := os.ReadFile(base)
	if err != nil {
		return err
	}
	doc := map[string]any{}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", base, err)
	}
	for path, v := range set {
		if err := setPath(doc, strings.Split(path, "."), v); err != nil {
			return fmt.Errorf("%s: %s: %w", base, path, err)
		}
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	header := fmt.Sprintf("# Effective configuration written by the standalone launcher from %s.\n", base)
	return os.WriteFile(out, append([]byte(header), b...), 0o600)
}

func setPath(m map[string]any, path []string, v any) error {
	if len(path) == 1 {
		if v == nil {
			delete(m, path[0])
		} else {
			m[path[0]] = v
		}
		return nil
	}
	child, ok := m[path[0]]
	if !ok || child == nil {
		if v == nil {
			return nil
		}
		child = map[string]any{}
		m[path[0]] = child
	}
	cm, ok := child.(map[string]any)
	if !ok {
		return fmt.Errorf("%s is not a mapping", path[0])
	}
	return setPath(cm, path[1:], v)
}
