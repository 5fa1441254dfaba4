package faults

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/core/discov"
	"github.com/zeromicro/go-zero/core/service"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/standalone"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/mq/mqserver"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// Topology is deploy/multinode/topology.yaml: the counts of the multi-node deployment,
// which the cluster table runs.
type Topology struct {
	Redis struct {
		Masters           int `json:",range=[3:16]"`
		ReplicasPerMaster int `json:",range=[1:4]"`
	}
	Kafka struct {
		Partitions int `json:",range=[1:256]"`
	}
	Instances struct {
		Inventory int `json:",range=[2:8]"`
		Writer    int `json:",range=[2:8]"`
		Gateway   int `json:",range=[2:8]"`
	}
}

// LoadTopology reads a topology file.
func LoadTopology(file string) (Topology, error) {
	var t Topology
	err := conf.Load(file, &t)
	return t, err
}

// clusterTopology is deploy/multinode/topology.yaml's counts, or override (Options.Topology)
// when set: at least one instance of each service, and a Redis Cluster redis-cli can create.
func clusterTopology(deploy string, override *Topology) (Topology, error) {
	t, err := LoadTopology(filepath.Join(deploy, "multinode", "topology.yaml"))
	if err != nil || override == nil {
		return t, err
	}
	o := *override
	i := o.Instances
	if i.Inventory < 1 || i.Writer < 1 || i.Gateway < 1 || o.Redis.Masters < 3 || o.Redis.ReplicasPerMaster < 0 ||
		o.Kafka.Partitions < 1 {
		return t, fmt.Errorf("topology %+v: want at least one instance of each service, 3 Redis masters (redis-cli's "+
			"least), no negative replica count and a partition", o)
	}
	return o, nil
}

// StartCluster builds the mains and brings up the multi-node topology of deploy/ on this
// machine: a Redis Cluster of masters and replicas (each node on
// deploy/redis/redis-cluster.conf), a single-member etcd, MariaDB, the kfake broker with
// the topology's partitions, and every instance of rpc, mq and api on the
// deploy/multinode configs with the addresses replaced.
func StartCluster(ctx context.Context, o Options) (s *System, err error) {
	sys, o, err := newSystem(ctx, o)
	if err != nil {
		return nil, err
	}
	s = sys
	defer sys.closeOnError(&err)
	deploy := filepath.Join(o.Root, "deploy")
	if s.Topology, err = clusterTopology(deploy, o.Topology); err != nil {
		return nil, err
	}
	if err := ensureTools(ctx, o, devenv.RedisPackage, devenv.MariaDBPackage, devenv.EtcdPackage,
		devenv.OpenSSLPackage); err != nil {
		return nil, err
	}
	if o.Deploy {
		if err := ensureTools(ctx, o, devenv.EtcdClientPackage, devenv.PrometheusPackage); err != nil {
			return nil, err
		}
		s.Deploy = &Deployment{Dir: deploy, Break: o.Break, change: o.Configure}
		if o.NetNS {
			if err := s.startHosts(o); err != nil {
				return nil, err
			}
		}
	}
	if err := s.startServers(ctx, o, deploy); err != nil {
		return nil, err
	}
	topo := s.Topology
	ni, nw, ng := topo.Instances.Inventory, topo.Instances.Writer, topo.Instances.Gateway
	ports, err := freePorts(1 + 2*(ni+nw+ng))
	if err != nil {
		return nil, err
	}
	s.KafkaAddr = s.shared(devenv.Loopback(ports[0]))
	if err := s.startKafka(ctx, topo.Kafka.Partitions); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "kfake broker (%d partitions) on %s\n", topo.Kafka.Partitions, s.KafkaAddr)
	files, err := s.writeClusterConfigs(filepath.Join(deploy, "multinode"), ports[1:])
	if err != nil {
		return nil, err
	}
	for i, f := range files.inventory {
		name := fmt.Sprintf("rpc-%d", i+1)
		addr := s.at(name, ports[1+i])
		s.Inventories = append(s.Inventories, s.service(name, "rpc", f,
			func(ctx context.Context) error { return dialOK(ctx, addr) }))
	}
	for i, f := range files.writer {
		s.Writers = append(s.Writers, s.service(fmt.Sprintf("mq-%d", i+1), "mq", f, nil))
	}
	for i, f := range files.gateway {
		name := fmt.Sprintf("api-%d", i+1)
		url := "http://" + s.at(name, ports[1+ni+i])
		s.APIURLs = append(s.APIURLs, url)
		s.Gateways = append(s.Gateways, s.service(name, "api", f,
			func(ctx context.Context) error { return healthy(ctx, url) }))
	}
	s.Inventory, s.Writer, s.Gateway, s.APIURL = s.Inventories[0], s.Writers[0], s.Gateways[0], s.APIURLs[0]
	for _, c := range s.children()[1:] {
		s.closers = append(s.closers, c.stop)
		if err := c.start(ctx); err != nil {
			return nil, err
		}
		fmt.Fprintf(o.Log, "%s started (log %s)\n", c.name, c.log)
	}
	return s, nil
}

// startServers starts the Redis Cluster, MariaDB and etcd; for the deploy test with
// deploy/'s users on each (Deployment).
func (s *System) startServers(ctx context.Context, o Options, deploy string) error {
	topo := s.Topology
	spec := devenv.ClusterSpec{Masters: topo.Redis.Masters, Replicas: topo.Redis.ReplicasPerMaster,
		Conf: filepath.Join(deploy, "redis", "redis-cluster.conf")}
	if s.hosts != nil {
		spec.Host = s.hosts.RedisIP // the Redis network's bridge: each host's second link
	}
	if s.Deploy != nil {
		err := s.Deploy.prepare(&spec, s.sharedIP())
		if s.Deploy.traces != nil {
			s.closers = append(s.closers, s.Deploy.traces.close)
		}
		if err != nil {
			return err
		}
	}
	var err error
	if s.Cluster, err = devenv.StartRedisClusterOf(ctx, spec); err != nil {
		return err
	}
	s.closers = append(s.closers, func() { _ = s.Cluster.Close() })
	fmt.Fprintf(o.Log, "private Redis Cluster (%d masters x %d replicas) on %s\n", topo.Redis.Masters,
		topo.Redis.ReplicasPerMaster, strings.Join(s.Cluster.Addrs(), ","))
	if s.MariaDB, err = devenv.StartMariaDBAlsoOn(ctx, s.sharedIP()); err != nil {
		return err
	}
	s.closers = append(s.closers, func() { _ = s.MariaDB.Close() })
	var eo devenv.EtcdOptions
	if s.Deploy != nil { // etcd over TLS, the certificates from deploy/'s script
		var env []string
		if s.hosts != nil { // etcd's host names (etcd-1, ...) by the address it listens on here
			env = []string{"ETCD_SANS=DNS:localhost,IP:127.0.0.1,IP:" + s.hosts.ServiceIP}
		}
		if _, _, _, err := genCerts(deploy, s.Dir, env...); err != nil {
			return err
		}
		if eo, err = s.Deploy.etcdOptions(filepath.Join(s.Dir, "tls")); err != nil {
			return err
		}
		eo.Host = s.sharedIP()
	}
	if s.Etcd, err = devenv.StartEtcdOf(ctx, eo); err != nil {
		return err
	}
	s.closers = append(s.closers, func() { _ = s.Etcd.Close() })
	fmt.Fprintf(o.Log, "private MariaDB on %s, etcd on %s\n", s.MariaDB.Addr, s.Etcd.Addr)
	if s.Deploy != nil {
		return s.Deploy.servers(ctx, s, o.Log)
	}
	return nil
}

// service is a service process running bin with the config file f; in the deploy test's
// system with its service's environment only, and with NetNS on its own host.
func (s *System) service(name, bin, f string, ready func(context.Context) error) *child {
	c := &child{name: name, bin: filepath.Join(s.Dir, bin), log: filepath.Join(s.Dir, name+".log"),
		args: []string{"-f", f}, ready: ready}
	if s.Deploy != nil {
		c.env = s.Deploy.env[bin] // only its service's (deployenv.go)
	}
	c.hosts = s.hosts
	return c
}

type clusterFiles struct {
	inventory, writer, gateway []string
}

// writeClusterConfigs loads deploy/multinode's rpc.yaml, mq.yaml and api.yaml through each
// service's LoadConfig, points them at this system (Redis Cluster, etcd, MariaDB, the
// broker; every instance on its own ports) and writes the JSON files. ports: the rpc
// instances' listen ports, the gateways', then (the deploy test) each instance's metrics.
func (s *System) writeClusterConfigs(dir string, ports []int) (files clusterFiles, err error) {
	if s.Deploy != nil {
		err = setDeploySecrets()
	} else {
		err = freshSecrets()
	}
	if err != nil {
		return files, err
	}
	inv, err := rpcserver.LoadConfig(filepath.Join(dir, "rpc.yaml"))
	if err != nil {
		return files, err
	}
	w, err := mqserver.LoadConfig(filepath.Join(dir, "mq.yaml"))
	if err != nil {
		return files, err
	}
	g, err := apiserver.LoadConfig(filepath.Join(dir, "api.yaml"))
	if err != nil {
		return files, err
	}
	if n := w.Consumer.Conns * s.Topology.Instances.Writer; n > s.Topology.Kafka.Partitions {
		return files, fmt.Errorf("mq.yaml: %d writers x Consumer.Conns %d is more members than the %d partitions",
			s.Topology.Instances.Writer, w.Consumer.Conns, s.Topology.Kafka.Partitions)
	}
	// Addresses: this system's servers instead of deploy/'s host names.
	for _, e := range []*discov.EtcdConf{&inv.Etcd, &w.Inventory.Etcd, &g.Inventory.Etcd} {
		e.Hosts = []string{s.Etcd.Addr}
	}
	w.Inventory.Endpoints, g.Inventory.Endpoints = nil, nil
	cluster := strings.Join(s.Cluster.Addrs(), ",")
	inv.StockRedis.Host, w.Outbox.Redis.Host, g.Redis.Host = cluster, cluster, cluster
	inv.Relay.Brokers = []string{s.KafkaAddr}
	w.Consumer.Brokers, w.DeadLetter.Brokers = []string{s.KafkaAddr}, []string{s.KafkaAddr}
	ca := ""
	if inv.TLS.CertFile != "" { // TLS as deploy/ configures it, the certificates made by its script
		if ca, inv.TLS.CertFile, inv.TLS.KeyFile, err = genCerts(filepath.Dir(dir), s.Dir); err != nil {
			return files, err
		}
	}
	w.InventoryTLS.CAFile, g.InventoryTLS.CAFile = ca, ca
	if s.Deploy != nil {
		err = s.Deploy.configure(s, &inv, &w, &g)
	} else {
		err = s.clusterConfigure(&inv, &w, &g)
	}
	if err != nil {
		return files, err
	}
	s.invCfg = inv
	return s.writeClusterFiles(inv, w, g, ports)
}

// clusterConfigure is the cluster table's change to deploy/'s configs: dev mode, no
// metrics, root on MariaDB, no Redis or Kafka users (its servers take no credentials),
// fresh secrets in the files.
func (s *System) clusterConfigure(inv *rpcserver.Config, w *mqserver.Config, g *apiserver.Config) error {
	common(&inv.ServiceConf)
	common(&w.ServiceConf)
	common(&g.ServiceConf)
	etcd := discov.EtcdConf{Hosts: []string{s.Etcd.Addr}, Key: inv.Etcd.Key}
	inv.Etcd, w.Inventory.Etcd, g.Inventory.Etcd = etcd, etcd, etcd
	inv.Mysql.DataSource, w.Mysql.DataSource = s.MariaDB.DSN, s.MariaDB.DSN
	w.Outbox.Redis, w.Outbox.KeyPrefix = inv.StockRedis, inv.KeyPrefix
	g.Redis.Type = "cluster"
	inv.StockRedis.User, inv.StockRedis.Pass = "", ""
	w.Outbox.Redis.User, w.Outbox.Redis.Pass, g.Redis.User, g.Redis.Pass = "", "", "", ""
	inv.Relay.Kafka, w.Kafka = kafkax.Auth{}, kafkax.Auth{}
	standalone.Secure(inv, w, g)
	// deploy/ leaves payment to the provider's notification; the suite's buyers pay themselves.
	g.Pay.BuyerConfirms = true
	// The gateway takes its secrets from the environment before its file: the same ones.
	for k, v := range map[string]string{"SECKILL_BUYER_SECRET": g.BuyerAuth.AccessSecret,
		"SECKILL_MERCHANT_SECRET": g.MerchantAuth.AccessSecret} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	s.BuyerSecret, s.MerchantSecret = g.BuyerAuth.AccessSecret, g.MerchantAuth.AccessSecret
	return nil
}

// writeClusterFiles writes one config file per instance, each on its ports (ports as
// writeClusterConfigs); the metrics ports only for the deploy test.
func (s *System) writeClusterFiles(inv rpcserver.Config, w mqserver.Config, g apiserver.Config,
	ports []int) (files clusterFiles, err error) {
	t := s.Topology.Instances
	listen, metrics := ports[:t.Inventory+t.Gateway], ports[t.Inventory+t.Gateway:]
	next := func(sc *service.ServiceConf, name string) {
		if s.Deploy != nil {
			s.Deploy.metrics(sc, name, s.hostIP(name), metrics[0])
			metrics = metrics[1:]
		}
	}
	for i := range t.Inventory {
		inv.ListenOn = s.at(fmt.Sprintf("rpc-%d", i+1), listen[i])
		next(&inv.ServiceConf, fmt.Sprintf("rpc-%d", i+1))
		f := filepath.Join(s.Dir, fmt.Sprintf("rpc-%d.json", i+1))
		if err := writeConfig(f, inv, rpcserver.LoadConfig); err != nil {
			return files, err
		}
		files.inventory = append(files.inventory, f)
	}
	for i := range t.Writer {
		next(&w.ServiceConf, fmt.Sprintf("mq-%d", i+1))
		f := filepath.Join(s.Dir, fmt.Sprintf("mq-%d.json", i+1))
		if err := writeConfig(f, w, mqserver.LoadConfig); err != nil {
			return files, err
		}
		files.writer = append(files.writer, f)
	}
	for i := range t.Gateway {
		g.Host, g.Port = s.hostIP(fmt.Sprintf("api-%d", i+1)), listen[t.Inventory+i]
		next(&g.ServiceConf, fmt.Sprintf("api-%d", i+1))
		f := filepath.Join(s.Dir, fmt.Sprintf("api-%d.json", i+1))
		if err := writeConfig(f, g, apiserver.LoadConfig); err != nil {
			return files, err
		}
		files.gateway = append(files.gateway, f)
	}
	return files, nil
}

// freshSecrets sets the secrets deploy/ takes from the environment to fresh ones where
// unset (the processes get theirs from the written files, standalone.Secure).
func freshSecrets() error {
	for _, k := range []string{"SECKILL_MYSQL_PASSWORD", "SECKILL_ORDER_KEY", "SECKILL_RPC_API_TOKEN",
		"SECKILL_RPC_MQ_TOKEN", "SECKILL_RPC_OPS_TOKEN", "SECKILL_BUYER_SECRET", "SECKILL_MERCHANT_SECRET"} {
		if os.Getenv(k) == "" {
			var b [32]byte
			_, _ = rand.Read(b[:])
			if err := os.Setenv(k, hex.EncodeToString(b[:])); err != nil {
				return err
			}
		}
	}
	return nil
}

// genCerts runs deploy/tls/gen-certs.sh (the operator's script) into dir/tls once: the CA
// the clients trust, the inventory service's certificate and key (and etcd's certificates);
// env is added to the script's environment (ETCD_SANS: the deploy test's etcd address).
func genCerts(deploy, dir string, env ...string) (ca, cert, key string, err error) {
	out := filepath.Join(dir, "tls")
	ca, cert, key = filepath.Join(out, "ca.crt"), filepath.Join(out, "rpc.crt"), filepath.Join(out, "rpc.key")
	if _, err := os.Stat(key); err == nil {
		return ca, cert, key, nil // made for etcd already (the deploy test)
	}
	cmd := exec.Command("bash", filepath.Join(deploy, "tls", "gen-certs.sh"), out)
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", "", "", fmt.Errorf("deploy/tls/gen-certs.sh: %w: %s", err, b)
	}
	return ca, cert, key, nil
}
