package etc_test

import (
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/seckill/seckill/api/apiserver"
)

// k8sServiceConf is what a Deployment must agree with in its service's config.
type k8sServiceConf struct {
	Port      int    `yaml:"Port"`     // the gateway's HTTP port
	ListenOn  string `yaml:"ListenOn"` // the inventory service's zRPC address
	DevServer struct {
		Port        int    `yaml:"Port"`
		HealthPath  string `yaml:"HealthPath"`
		MetricsPath string `yaml:"MetricsPath"`
	} `yaml:"DevServer"`
	TLS struct {
		CertFile string `yaml:"CertFile"`
		KeyFile  string `yaml:"KeyFile"`
	} `yaml:"TLS"`
	InventoryTLS struct {
		CAFile string `yaml:"CAFile"`
	} `yaml:"InventoryTLS"`
	Etcd      k8sEtcdTLS `yaml:"Etcd"` // the inventory service's registration
	Inventory struct {
		Etcd k8sEtcdTLS `yaml:"Etcd"` // the writer's discovery (the gateway's is k8s://)
	} `yaml:"Inventory"`
}

// k8sEtcdTLS is an Etcd block's certificates (etcd over TLS).
type k8sEtcdTLS struct {
	CertFile    string `yaml:"CertFile"`
	CertKeyFile string `yaml:"CertKeyFile"`
	CACertFile  string `yaml:"CACertFile"`
}

// servePort is the port of the service's own server: 0 for the writer, which runs none.
func (c k8sServiceConf) servePort(t *testing.T) int {
	t.Helper()
	if c.ListenOn == "" {
		return c.Port
	}
	_, p, err := net.SplitHostPort(c.ListenOn)
	n, _ := strconv.Atoi(p)
	if err != nil || n == 0 {
		t.Fatalf("ListenOn %q: %v", c.ListenOn, err)
	}
	return n
}

// k8sDeploymentConfig returns the binary a Deployment runs and the config it runs it with:
// the ConfigMap's file mounted where its -f points.
func k8sDeploymentConfig(t *testing.T, d *appsv1.Deployment, cm *corev1.ConfigMap) (string, []byte) {
	t.Helper()
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	cmd := spec.Containers[0].Command
	if len(cmd) != 3 || cmd[1] != "-f" || !strings.HasPrefix(cmd[0], "/opt/seckill/bin/") {
		t.Fatalf("command %q: want /opt/seckill/bin/<service> -f <config>", cmd)
	}
	for _, m := range spec.Containers[0].VolumeMounts {
		if m.MountPath != path.Dir(cmd[2]) {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name != m.Name || v.ConfigMap == nil || v.ConfigMap.Name != cm.Name {
				continue
			}
			for _, it := range v.ConfigMap.Items {
				if it.Path == path.Base(cmd[2]) && cm.Data[it.Key] != "" {
					return path.Base(cmd[0]), []byte(cm.Data[it.Key])
				}
			}
		}
	}
	t.Fatalf("its config %s is not a file of ConfigMap %s", cmd[2], cm.Name)
	return "", nil
}

// Each Deployment listens, is probed and gets its secrets as its config says: container
// ports are the config's; readiness is go-zero's DevServer /healthz (the writer, without a
// server, its metrics); liveness a TCP check of the DevServer port, which asks no dependency;
// exactly the secrets its config names, from its own Secret; its TLS files mounted.
func TestK8sDeploymentsMatchConfigs(t *testing.T) {
	objs := k8sObjects(t)
	cm := k8sConfigMap(t, objs)
	deps := ofKind[*appsv1.Deployment](objs)
	if len(deps) != 3 {
		t.Fatalf("%d Deployments, want 3 (api, rpc, mq)", len(deps))
	}
	for _, d := range deps {
		t.Run(d.Name, func(t *testing.T) {
			bin, raw := k8sDeploymentConfig(t, d, cm)
			var conf k8sServiceConf
			if err := yaml.Unmarshal(raw, &conf); err != nil {
				t.Fatal(err)
			}
			c := d.Spec.Template.Spec.Containers[0]
			checkK8sPorts(t, c, conf)
			checkK8sProbes(t, c, conf)
			checkK8sEnv(t, c, bin, raw)
			if conf.TLS.CertFile == "" && conf.InventoryTLS.CAFile == "" {
				t.Error("no TLS file in its config (zRPC runs over TLS)")
			}
			files := []string{conf.TLS.CertFile, conf.TLS.KeyFile, conf.InventoryTLS.CAFile}
			for _, e := range []k8sEtcdTLS{conf.Etcd, conf.Inventory.Etcd} {
				files = append(files, e.CertFile, e.CertKeyFile, e.CACertFile)
			}
			for _, f := range files {
				if f != "" && !k8sSecretFileMounted(d, f) {
					t.Errorf("%s (its config's TLS, zRPC or etcd) is not mounted from a Secret", f)
				}
			}
		})
	}
}

func checkK8sPorts(t *testing.T, c corev1.Container, conf k8sServiceConf) {
	t.Helper()
	want := []int32{int32(conf.DevServer.Port)}
	if p := conf.servePort(t); p != 0 {
		want = append(want, int32(p))
	}
	var have []int32
	for _, p := range c.Ports {
		have = append(have, p.ContainerPort)
	}
	slices.Sort(want)
	slices.Sort(have)
	if conf.DevServer.Port == 0 || !slices.Equal(have, want) {
		t.Errorf("containerPorts %v, want the config's %v (server, DevServer)", have, want)
	}
}

func checkK8sProbes(t *testing.T, c corev1.Container, conf k8sServiceConf) {
	t.Helper()
	dev := conf.DevServer
	// go-zero's DevServer /healthz is 200 once the process's rest or zRPC server started;
	// in a process without one (the writer) it is 503 for good.
	wantPath := dev.HealthPath
	if conf.servePort(t) == 0 {
		wantPath = dev.MetricsPath
	} else if wantPath != "/healthz" {
		t.Errorf("DevServer.HealthPath %q, want /healthz", wantPath)
	}
	r := c.ReadinessProbe
	if r == nil || r.HTTPGet == nil || r.HTTPGet.Path != wantPath || r.HTTPGet.Port.IntValue() != dev.Port {
		t.Errorf("readinessProbe %+v: want GET %s on the DevServer port %d", r, wantPath, dev.Port)
	}
	l := c.LivenessProbe
	if l == nil || l.TCPSocket == nil || l.HTTPGet != nil || l.Exec != nil || l.GRPC != nil ||
		l.TCPSocket.Port.IntValue() != dev.Port {
		t.Errorf("livenessProbe %+v: want a TCP check of the DevServer port %d, nothing else", l, dev.Port)
	}
}

// checkK8sEnv checks that the container reads exactly the secrets its config names (and the
// gateway's own), each from its service's own Secret, seckill-<bin>, under its own name.
func checkK8sEnv(t *testing.T, c corev1.Container, bin string, raw []byte) {
	t.Helper()
	if len(c.EnvFrom) != 0 {
		t.Errorf("envFrom %+v: name each secret", c.EnvFrom)
	}
	var have []string
	for _, e := range c.Env {
		ref := (*corev1.SecretKeySelector)(nil)
		if e.ValueFrom != nil {
			ref = e.ValueFrom.SecretKeyRef
		}
		if ref == nil || ref.Key != e.Name || ref.Name != "seckill-"+bin {
			t.Errorf("env %s: want it from Secret seckill-%s, key %s", e.Name, bin, e.Name)
			continue
		}
		have = append(have, e.Name)
	}
	slices.Sort(have)
	if want := secretsIn(t, bin, raw); !slices.Equal(have, want) {
		t.Errorf("env %v, want exactly the config's %v", have, want)
	}
}

// k8sSecretFileMounted says whether file is a key of a Secret mounted in its directory.
func k8sSecretFileMounted(d *appsv1.Deployment, file string) bool {
	spec := d.Spec.Template.Spec
	for _, m := range spec.Containers[0].VolumeMounts {
		for _, v := range spec.Volumes {
			if m.MountPath != path.Dir(file) || v.Name != m.Name {
				continue
			}
			var items []corev1.KeyToPath // a Secret's, or those of each Secret a projected volume takes
			if v.Secret != nil {
				items = v.Secret.Items
			}
			if v.Projected != nil {
				for _, src := range v.Projected.Sources {
					if src.Secret != nil {
						items = append(items, src.Secret.Items...)
					}
				}
			}
			for _, it := range items {
				if it.Path == path.Base(file) {
					return true
				}
			}
		}
	}
	return false
}

// The gateway's config loads with the k8s:// target, which names the rpc Service and the
// port rpc.yaml listens on; its service account may list and watch EndpointSlices there
// (what go-zero's k8s resolver reads), and no other pod gets an API token.
func TestK8sGatewayDiscovery(t *testing.T) {
	setSecrets(t)
	objs := k8sObjects(t)
	api := filepath.Join(t.TempDir(), "api.yaml")
	if err := os.WriteFile(api, []byte(k8sConfigMap(t, objs).Data["api.yaml"]), 0o600); err != nil {
		t.Fatal(err)
	}
	ac, err := apiserver.LoadConfig(api)
	if err != nil {
		t.Fatal(err)
	}
	if err := ac.Validate(); err != nil {
		t.Fatal(err)
	}
	if target, err := ac.Inventory.BuildTarget(); err != nil || target != k8sInventoryTarget {
		t.Fatalf("the gateway's inventory target %q (%v), want %s", target, err, k8sInventoryTarget)
	}
	var rpc k8sServiceConf
	if err := yaml.Unmarshal(k8sConfig(t, "rpc.yaml"), &rpc); err != nil {
		t.Fatal(err)
	}
	name, port, _ := strings.Cut(strings.TrimPrefix(k8sInventoryTarget, "k8s://"+k8sNamespace+"/"), ":")
	if port != strconv.Itoa(rpc.servePort(t)) || !k8sServiceSelects(objs, name, rpc.servePort(t), "rpc") {
		t.Errorf("%s: want Service %s with port %d selecting the rpc pods", k8sInventoryTarget, name, rpc.servePort(t))
	}
	for _, d := range ofKind[*appsv1.Deployment](objs) {
		spec := d.Spec.Template.Spec
		token := spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken
		if d.Name != "api" && token {
			t.Errorf("%s: automountServiceAccountToken must be false (it calls no Kubernetes API)", d.Name)
		}
		if d.Name == "api" && (!token || !k8sMayWatchEndpointSlices(objs, spec.ServiceAccountName)) {
			t.Errorf("api: service account %q may not list and watch endpointslices", spec.ServiceAccountName)
		}
	}
}

// k8sServiceSelects says whether Service name has port and selects the pods of Deployment dep.
func k8sServiceSelects(objs []any, name string, port int, dep string) bool {
	for _, s := range ofKind[*corev1.Service](objs) {
		for _, d := range ofKind[*appsv1.Deployment](objs) {
			if s.Name != name || d.Name != dep || s.Spec.Selector["app"] != d.Spec.Template.Labels["app"] {
				continue
			}
			for _, p := range s.Spec.Ports {
				if int(p.Port) == port && p.TargetPort.IntValue() == port {
					return true
				}
			}
		}
	}
	return false
}

// k8sMayWatchEndpointSlices says whether service account sa is bound to a Role that lets
// it list and watch discovery.k8s.io's endpointslices.
func k8sMayWatchEndpointSlices(objs []any, sa string) bool {
	for _, b := range ofKind[*rbacv1.RoleBinding](objs) {
		if !slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool {
			return s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == k8sNamespace
		}) {
			continue
		}
		for _, r := range ofKind[*rbacv1.Role](objs) {
			if b.RoleRef.Kind != "Role" || r.Name != b.RoleRef.Name {
				continue
			}
			for _, rule := range r.Rules {
				if slices.Contains(rule.APIGroups, "discovery.k8s.io") &&
					slices.Contains(rule.Resources, "endpointslices") &&
					slices.Contains(rule.Verbs, "list") && slices.Contains(rule.Verbs, "watch") {
					return true
				}
			}
		}
	}
	return false
}

// The instances are multinode/topology.yaml's: the inventory's and the writers' replicas,
// the gateway's autoscaler's minimum; every Deployment has a PodDisruptionBudget.
func TestK8sInstances(t *testing.T) {
	raw, err := os.ReadFile("../deploy/multinode/topology.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var topo struct {
		Instances struct {
			Inventory int32 `yaml:"Inventory"`
			Writer    int32 `yaml:"Writer"`
			Gateway   int32 `yaml:"Gateway"`
		} `yaml:"Instances"`
	}
	if err := yaml.Unmarshal(raw, &topo); err != nil {
		t.Fatal(err)
	}
	objs := k8sObjects(t)
	want := map[string]int32{"rpc": topo.Instances.Inventory, "mq": topo.Instances.Writer}
	for _, d := range ofKind[*appsv1.Deployment](objs) {
		if n, ok := want[d.Name]; ok && (d.Spec.Replicas == nil || *d.Spec.Replicas != n) {
			t.Errorf("%s: replicas %s, want topology.yaml's %d", d.Name, k8sInt(d.Spec.Replicas), n)
		}
		if !slices.ContainsFunc(ofKind[*policyv1.PodDisruptionBudget](objs), func(p *policyv1.PodDisruptionBudget) bool {
			return p.Spec.Selector != nil && p.Spec.Selector.MatchLabels["app"] == d.Spec.Template.Labels["app"]
		}) {
			t.Errorf("%s: no PodDisruptionBudget", d.Name)
		}
	}
	hpas := ofKind[*autoscalingv2.HorizontalPodAutoscaler](objs)
	if len(hpas) != 1 || hpas[0].Spec.ScaleTargetRef.Name != "api" || hpas[0].Spec.MinReplicas == nil ||
		*hpas[0].Spec.MinReplicas != topo.Instances.Gateway {
		t.Errorf("want one HorizontalPodAutoscaler, of api, minReplicas topology.yaml's %d", topo.Instances.Gateway)
	}
}

// k8sInt prints an optional count.
func k8sInt(n *int32) string {
	if n == nil {
		return "unset"
	}
	return strconv.Itoa(int(*n))
}
