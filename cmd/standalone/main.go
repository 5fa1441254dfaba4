// Command standalone runs the whole seckill system on this machine (make run): gateway,
// inventory service and order writer, wired over HTTP, zRPC, Kafka, MySQL and Redis. Each
// dependency given by address is used as is; otherwise the launcher starts its own (a
// private redis-server and MariaDB from the installed binaries, installing them with
// apt-get when it can, and an in-process Kafka broker). Ctrl-C stops everything it started.
//
//	make run
//	go run -tags no_k8s ./cmd/standalone -trace otlpgrpc://127.0.0.1:4317   # spans to Jaeger / a collector
//	SECKILL_REDIS=127.0.0.1:6379 SECKILL_MYSQL_DSN='root:@tcp(127.0.0.1:3306)/seckill' make run
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/seckill/seckill/devkit/standalone"
	"github.com/seckill/seckill/internal/buildinfo"
)

func main() {
	var cfg standalone.Config
	var kafka string
	flag.StringVar(&cfg.EtcDir, "etc", "etc", "directory of the services' YAML configs")
	flag.StringVar(&cfg.RedisAddr, "redis", "",
		"Redis host:port to use (env "+standalone.EnvRedis+"; default: start a private redis-server)")
	flag.StringVar(&cfg.MySQLDSN, "mysql", "",
		"MySQL DSN to use (env "+standalone.EnvMySQL+"; default: start a private MariaDB)")
	flag.StringVar(&kafka, "kafka", "",
		"comma-separated Kafka brokers (env "+standalone.EnvKafka+"; default: in-process kfake)")
	flag.StringVar(&cfg.KafkaDataDir, "kafka-data-dir", "", "keep the in-process broker's log here (default: in memory)")
	flag.IntVar(&cfg.KafkaPartitions, "partitions", 8, "partitions of the in-process broker's topics")
	flag.StringVar(&cfg.APIAddr, "api", "127.0.0.1:8888", "gateway listen address (a free port if taken)")
	flag.StringVar(&cfg.Mode, "mode", "dev", "go-zero mode of the services (pro enables load shedding)")
	flag.StringVar(&cfg.LogLevel, "log-level", "error", "go-zero log level (debug, info, error, severe)")
	flag.StringVar(&cfg.KeyPrefix, "key-prefix", "", "Redis key prefix")
	flag.StringVar(&cfg.Trace, "trace", "", "send spans to otlpgrpc://host:4317, otlphttp://host:4318, "+
		"a zipkin http(s):// URL or a file (default: tracing off, as in etc/)")
	traceHeaders := flag.String("trace-headers", "", "key=value,... sent with each OTLP export")
	noInstall := flag.Bool("no-install", false, "never apt-get install a missing redis-server / mariadb-server")
	version := buildinfo.Flag()
	flag.Parse()
	if buildinfo.PrintIf(version, "seckill-standalone") {
		return
	}
	if kafka != "" {
		cfg.KafkaBrokers = strings.Split(kafka, ",")
	}
	headers, err := standalone.ParseHeaders(*traceHeaders)
	if err != nil {
		fmt.Fprintln(os.Stderr, "standalone:", err)
		os.Exit(2)
	}
	cfg.TraceHeaders = headers
	cfg.FromEnv()
	cfg.Install = !*noInstall
	cfg.Log = os.Stderr
	if code := run(cfg); code != 0 {
		os.Exit(code)
	}
}

// run starts the system, prints where it is and stops it on Ctrl-C; it returns the exit
// status.
func run(cfg standalone.Config) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sys, err := standalone.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "standalone:", err)
		return 1
	}
	fmt.Printf(`
seckill is running.
  gateway        %s
  console        %s/console/  (merchant console: paste $MERCHANT below)
  metrics        %s
  inventory rpc  %s
  redis          %s
  mysql          %s
  kafka          %s
  configs        %s (addresses set by the launcher)
  traces         %s
  started here   %s

demo tokens (buyer uid 1, merchant mid 1, valid 24 h):
  export BUYER=%s
  export MERCHANT=%s

try:
  curl -s -H "Authorization: Bearer $MERCHANT" -H "Content-Type: application/json" \
    -d "{\"sku_id\":1,\"name\":\"demo\",\"stock\":100,\"start_time\":%s,\"end_time\":%s}" \
    %s/v1/admin/activities
a whole sale (20,000 buyers, 1,000 stock; it pays through the payment provider's signed
notification, POST /v1/payments/notify, with SECKILL_PAYMENT_SECRET):
  SECKILL_BUYER_SECRET=%s SECKILL_MERCHANT_SECRET=%s \
  SECKILL_PAYMENT_SECRET=%s \
    go run -tags no_k8s ./cmd/loadgen -url %s -html report.html

Ctrl-C stops everything.
`, sys.APIURL, sys.APIURL, sys.MetricsURL, sys.RPCAddr, sys.RedisAddr, sys.MySQLDSN,
		strings.Join(sys.KafkaBrokers, ","),
		cfg.EtcDir, traces(cfg.Trace), private(sys.Private), sys.BuyerToken, sys.MerchantToken,
		"$(date +%s)", "$(( $(date +%s) + 3600 ))", sys.APIURL, sys.BuyerSecret, sys.MerchantSecret, sys.PaymentSecret,
		sys.APIURL)
	<-ctx.Done()
	stop()
	fmt.Fprintln(os.Stderr, "stopping...")
	sys.Close()
	fmt.Fprintln(os.Stderr, "stopped")
	return 0
}

func traces(dest string) string {
	if dest == "" {
		return "off (-trace otlpgrpc://127.0.0.1:4317 or -trace spans.jsonl turns them on)"
	}
	return dest
}

func private(names []string) string {
	if len(names) == 0 {
		return "nothing (every dependency was given by address)"
	}
	return strings.Join(names, ", ")
}
