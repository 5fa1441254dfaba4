package faults

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/rpc/rpcserver"
)

// appTokensCheck: no zRPC app token of rpc.yaml's Apps is in Redis: the hash go-zero's
// authenticator would read (sk:rpc:apps) does not exist, and no node's append-only file
// holds a token (the AOF keeps every write, including a hash since deleted).
func (s *System) appTokensCheck(ctx context.Context) Check {
	const name = "Redis: no zRPC app token stored (hash, AOF)"
	key := rpcserver.AppsKey(s.invCfg.KeyPrefix)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: s.Cluster.Addrs(), Username: "admin",
		Password: adminPass(), DisableIdentity: true})
	n, err := c.Exists(ctx, key).Result()
	_ = c.Close()
	if err != nil {
		return check(name, false, "EXISTS %s: %v", key, err)
	}
	var tokens [][]byte
	for _, a := range s.invCfg.Apps {
		tokens = append(tokens, []byte(a.Token))
	}
	files, size, found, err := scanAOF(s, tokens)
	if err != nil {
		return check(name, false, "reading the AOF files: %v", err)
	}
	return check(name, n == 0 && len(tokens) > 0 && files > 0 && len(found) == 0,
		"%s: exists %d (LegacyAppsHash %v, rpc.yaml); %d tokens of Apps looked for in %d AOF files "+
			"of %d nodes (%d bytes): found in %s", key, n, s.invCfg.LegacyAppsHash, len(tokens), files,
		len(s.Cluster.Nodes), size, orNone(found))
}

// scanAOF reads every append-only file of the Redis nodes (appendonlydir) and names those
// holding one of tokens.
func scanAOF(s *System, tokens [][]byte) (files int, size int64, found []string, err error) {
	for _, node := range s.Cluster.Nodes {
		err = filepath.WalkDir(node.Dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.Contains(d.Name(), ".aof") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			size += int64(len(b))
			for _, t := range tokens {
				if bytes.Contains(b, t) {
					found = append(found, node.Addr+" "+d.Name())
					break
				}
			}
			return nil
		})
		if err != nil {
			return files, size, found, err
		}
	}
	return files, size, found, nil
}
