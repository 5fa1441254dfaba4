// Package redisx is a plain go-redis client for what go-zero's Redis does not do: a
// subscription (go-zero's Redis has no SUBSCRIBE) and a probe that goes around go-zero's
// breaker (every command of go-zero's client, PING included, runs through it).
package redisx

import (
	"context"
	"crypto/tls"
	"strings"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"
)

// NewClient is a go-redis client for c: a node, or a Redis Cluster (comma-separated Host),
// with c's user, password and TLS (the server's certificate checked against the system's
// roots).
func NewClient(c redis.RedisConf) red.UniversalClient { return newClient(c, false) }

// NewProbe is NewClient that asks once: no command retries, one dial attempt. A refused
// connection answers at once; go-redis's defaults take 0.4 s (5 dial attempts 100 ms apart)
// for each of 4 tries.
func NewProbe(c redis.RedisConf) red.UniversalClient { return newClient(c, true) }

func newClient(c redis.RedisConf, once bool) red.UniversalClient {
	retries, dials := 0, 0 // go-redis's defaults
	if once {
		retries, dials = -1, 1
	}
	var tc *tls.Config
	if c.Tls {
		tc = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if c.Type == redis.ClusterType {
		return red.NewClusterClient(&red.ClusterOptions{Addrs: strings.Split(c.Host, ","), Username: c.User,
			Password: c.Pass, DisableIdentity: c.DisableIdentity, TLSConfig: tc,
			MaxRetries: retries, DialerRetries: dials})
	}
	return red.NewClient(&red.Options{Addr: c.Host, Username: c.User, Password: c.Pass,
		DisableIdentity: c.DisableIdentity, TLSConfig: tc, MaxRetries: retries, DialerRetries: dials})
}

// Answers reports whether Redis answers a PING from cli: no breaker decides it.
func Answers(ctx context.Context, cli red.UniversalClient) bool {
	return cli.Ping(ctx).Err() == nil
}
