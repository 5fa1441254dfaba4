// The mq service: applies stock-change events from Kafka to MySQL.
package main

import (
	"flag"
	"fmt"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/internal/buildinfo"
	"github.com/seckill/seckill/mq/mqserver"
)

var configFile = flag.String("f", "etc/mq.yaml", "the config file")
var version = buildinfo.Flag()

func main() {
	flag.Parse()
	if buildinfo.PrintIf(version, "seckill-mq") {
		return
	}
	c, err := mqserver.LoadConfig(*configFile)
	logx.Must(err)
	s, err := mqserver.New(c)
	logx.Must(err)
	defer s.Stop()
	fmt.Printf("Starting mq: %s -> MySQL\n", c.Consumer.Topic)
	s.Start()
}
