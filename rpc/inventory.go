package main

import (
	"flag"
	"fmt"
	"log"

	"github.com/seckill/seckill/internal/buildinfo"
	"github.com/seckill/seckill/rpc/rpcserver"
)

var configFile = flag.String("f", "etc/inventory.yaml", "the config file")
var version = buildinfo.Flag()

func main() {
	flag.Parse()
	if buildinfo.PrintIf(version, "seckill-rpc") {
		return
	}

	c, err := rpcserver.LoadConfig(*configFile)
	if err != nil {
		log.Fatalf("config %s: %v", *configFile, err)
	}
	s, err := rpcserver.New(c)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Stop()

	fmt.Printf("Starting rpc server at %s...\n", c.ListenOn)
	s.Start()
}
