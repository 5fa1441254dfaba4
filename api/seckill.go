// The seckill HTTP gateway (docs/API.md).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/internal/buildinfo"
)

var configFile = flag.String("f", "etc/seckill-api.yaml", "the config file")
var version = buildinfo.Flag()

func main() {
	flag.Parse()
	if buildinfo.PrintIf(version, "seckill-api") {
		return
	}

	c, err := apiserver.LoadConfig(*configFile)
	if err == nil {
		err = c.Validate()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "seckill-api: refusing to start: %v\n", err)
		os.Exit(1)
	}
	server, err := apiserver.New(c)
	if err != nil {
		fmt.Fprintf(os.Stderr, "seckill-api: %v\n", err)
		os.Exit(1)
	}
	defer server.Stop()

	fmt.Printf("Starting seckill-api at %s:%d...\n", c.Host, c.Port)
	server.Start()
}
