package devenv

import (
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// KafkaAuth reads deploy/kafka's users file (name, then the environment variable holding
// the password) and ACL file (user, operation, resource type, resource name) into kfake
// options: SASL/SCRAM-SHA-512 on, ACLs enforced, superuser the admin user (as
// KAFKA_SUPER_USERS in the compose file), every other user with exactly its ACLs. A user
// whose variable is unset is an error.
func KafkaAuth(usersFile, aclsFile, admin string) ([]kfake.Opt, error) {
	users, err := dataLines(usersFile, 2)
	if err != nil {
		return nil, err
	}
	rules, err := dataLines(aclsFile, 4)
	if err != nil {
		return nil, err
	}
	acls := map[string][]kfake.ACL{}
	for _, r := range rules {
		op, err := kmsg.ParseACLOperation(r[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", aclsFile, strings.Join(r, " "), err)
		}
		rt, err := kmsg.ParseACLResourceType(r[2])
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", aclsFile, strings.Join(r, " "), err)
		}
		acls[r[0]] = append(acls[r[0]], kfake.ACL{Resource: rt, Name: r[3], Operation: op, Allow: true,
			Pattern: kmsg.ACLResourcePatternTypeLiteral})
	}
	opts := []kfake.Opt{kfake.EnableSASL(), kfake.EnableACLs()}
	for _, u := range users {
		pass := os.Getenv(u[1])
		if pass == "" {
			return nil, fmt.Errorf("%s: user %s: %s is not set", usersFile, u[0], u[1])
		}
		if u[0] == admin {
			opts = append(opts, kfake.Superuser("SCRAM-SHA-512", u[0], pass))
			continue
		}
		opts = append(opts, kfake.User("SCRAM-SHA-512", u[0], pass, acls[u[0]]...))
		delete(acls, u[0])
	}
	for u := range acls {
		return nil, fmt.Errorf("%s: ACLs for %s, who is not in %s", aclsFile, u, usersFile)
	}
	return opts, nil
}

// dataLines are the lines of a data file of deploy/ that are neither empty nor comments,
// split into fields; each must have at least n.
func dataLines(file string, n int) ([][]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out [][]string
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) < n {
			return nil, fmt.Errorf("%s:%d: %d fields, want %d", file, i+1, len(f), n)
		}
		out = append(out, f)
	}
	return out, nil
}
