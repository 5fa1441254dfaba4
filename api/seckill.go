// The seckill HTTP gateway (docs/API.md).
package main

import (
	"flag"
	"fmt"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/apiserver"
)

var configFile = flag.String("f", "etc/seckill-api.yaml", "the config file")

func main() {
	flag.Parse()

	c, err := apiserver.LoadConfig(*configFile)
	logx.Must(err)
	server, err := apiserver.New(c)
	logx.Must(err)
	defer server.Stop()

	fmt.Printf("Starting seckill-api at %s:%d...\n", c.Host, c.Port)
	server.Start()
}
