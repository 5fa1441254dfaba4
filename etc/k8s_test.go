package etc_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

var updateK8s = flag.Bool("update-k8s", false, "rewrite deploy/k8s/config.yaml from deploy/multinode")

const (
	k8sDir       = "../deploy/k8s"
	k8sNamespace = "seckill"
	// The gateway's inventory target in Kubernetes: the pods of Service rpc, port 8080.
	k8sInventoryTarget = "k8s://" + k8sNamespace + "/rpc:8080"
)

// k8sKinds are the kinds the manifests may use, by apiVersion/kind (no removed API version).
var k8sKinds = map[string]func() any{
	"v1/Namespace":                  func() any { return &corev1.Namespace{} },
	"v1/ConfigMap":                  func() any { return &corev1.ConfigMap{} },
	"v1/Service":                    func() any { return &corev1.Service{} },
	"v1/ServiceAccount":             func() any { return &corev1.ServiceAccount{} },
	"apps/v1/Deployment":            func() any { return &appsv1.Deployment{} },
	"policy/v1/PodDisruptionBudget": func() any { return &policyv1.PodDisruptionBudget{} },
	"autoscaling/v2/HorizontalPodAutoscaler": func() any {
		return &autoscalingv2.HorizontalPodAutoscaler{}
	},
	"rbac.authorization.k8s.io/v1/Role":        func() any { return &rbacv1.Role{} },
	"rbac.authorization.k8s.io/v1/RoleBinding": func() any { return &rbacv1.RoleBinding{} },
}

// k8sObjects decodes every document of deploy/k8s/*.yaml into its k8s.io/api type, strictly:
// an unknown or duplicate field, or a kind not in k8sKinds, fails the test.
func k8sObjects(t *testing.T) []any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(k8sDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifest in %s: %v", k8sDir, err)
	}
	var objs []any
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---$`).Split(string(raw), -1) {
			var tm metav1.TypeMeta
			if err := sigsyaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatalf("%s #%d: %v", f, i, err)
			}
			newObj, ok := k8sKinds[tm.APIVersion+"/"+tm.Kind]
			if !ok {
				t.Fatalf("%s #%d: %s %s: not a kind the manifests use", f, i, tm.APIVersion, tm.Kind)
			}
			obj := newObj()
			if err := sigsyaml.UnmarshalStrict([]byte(doc), obj); err != nil {
				t.Fatalf("%s #%d (%s): %v", f, i, tm.Kind, err)
			}
			if m := obj.(metav1.Object); tm.Kind != "Namespace" && m.GetNamespace() != k8sNamespace {
				t.Errorf("%s %s: namespace %q, want %q", tm.Kind, m.GetName(), m.GetNamespace(), k8sNamespace)
			}
			objs = append(objs, obj)
		}
	}
	return objs
}

// ofKind returns the objects of type T.
func ofKind[T any](objs []any) []T {
	var out []T
	for _, o := range objs {
		if v, ok := o.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// k8sConfig is deploy/multinode's file as Kubernetes runs it: the same bytes, except the
// gateway's Inventory.Etcd block, replaced by the k8s:// target (no etcd account needed).
func k8sConfig(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../deploy/multinode", name))
	if err != nil {
		t.Fatal(err)
	}
	if name != "api.yaml" {
		return raw
	}
	lines := strings.SplitAfter(string(raw), "\n")
	start := slices.Index(lines, "Inventory:\n")
	for start >= 0 && start < len(lines) && lines[start] != "  Etcd:\n" {
		start++
	}
	if start < 0 || start == len(lines) {
		t.Fatal("multinode/api.yaml: no Inventory.Etcd block to replace by the k8s:// target")
	}
	end := start + 1
	for end < len(lines) && strings.HasPrefix(lines[end], "    ") {
		end++
	}
	target := []string{"  # Kubernetes: the inventory pods, from the API server (deploy/k8s/api.yaml's RBAC).\n",
		"  Target: " + k8sInventoryTarget + "\n"}
	return []byte(strings.Join(slices.Replace(lines, start, end, target...), ""))
}

// deploy/k8s/config.yaml holds deploy/multinode's configs (the gateway's with the k8s://
// target): it is written from them (-update-k8s), and any drift fails here.
func TestK8sConfigMap(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("# Generated from deploy/multinode/*.yaml (the gateway's Inventory.Etcd replaced by its k8s://\n" +
		"# target); do not edit: go test -tags no_k8s ./etc -run TestK8sConfigMap -update-k8s\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: seckill-config\n  namespace: " + k8sNamespace +
		"\ndata:\n")
	want := map[string]string{}
	for _, name := range []string{"api.yaml", "mq.yaml", "rpc.yaml"} {
		want[name] = string(k8sConfig(t, name))
		fmt.Fprintf(&b, "  %s: |\n", name)
		for _, l := range strings.SplitAfter(want[name], "\n") {
			if l != "" && l != "\n" {
				b.WriteString("    ")
			}
			b.WriteString(l)
		}
	}
	if *updateK8s {
		if err := os.WriteFile(filepath.Join(k8sDir, "config.yaml"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cm := k8sConfigMap(t, k8sObjects(t))
	for name, data := range want {
		if cm.Data[name] != data {
			t.Errorf("config.yaml's %s differs from deploy/multinode's (run the test with -update-k8s)", name)
		}
	}
	if len(cm.Data) != len(want) {
		t.Errorf("config.yaml holds %d files, want %d", len(cm.Data), len(want))
	}
}

// k8sConfigMap is the manifests' one ConfigMap, seckill-config.
func k8sConfigMap(t *testing.T, objs []any) *corev1.ConfigMap {
	t.Helper()
	cms := ofKind[*corev1.ConfigMap](objs)
	if len(cms) != 1 || cms[0].Name != "seckill-config" {
		t.Fatalf("%d ConfigMaps: want one, seckill-config", len(cms))
	}
	return cms[0]
}
