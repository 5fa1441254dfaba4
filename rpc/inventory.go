package main

import (
	"flag"
	"fmt"

	"github.com/zeromicro/go-zero/core/conf"

	"github.com/seckill/seckill/rpc/rpcserver"
)

var configFile = flag.String("f", "etc/inventory.yaml", "the config file")

func main() {
	flag.Parse()

	var c rpcserver.Config
	conf.MustLoad(*configFile, &c)
	s, err := rpcserver.New(c)
	if err != nil {
		panic(err)
	}
	defer s.Stop()

	fmt.Printf("Starting rpc server at %s...\n", c.ListenOn)
	s.Start()
}
