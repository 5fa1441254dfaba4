package devenv

import (
	"slices"
	"testing"
)

// The topology a clean-clone CI run was left with: redis-cli --cluster create's CLUSTER
// REPLICATE of 127.0.0.1:46653 failed, and the node stayed a master without slots, so the
// master of 5461-10922 had no replica (the cluster fault suite's first row could not run).
func TestClusterShortOfReplicas(t *testing.T) {
	const nodes = "c5c9e2e9d68038b021518d3136338f3ef73b74a6 127.0.0.1:40481@50481 myself,slave " +
		"dd389f75f74c7585671b3d1b04ac0125aa1bdab3 0 1796316855000 3 connected\n" +
		"99e1daaf8e4ac1658192238f5b037eb1a3ca1c23 127.0.0.1:44163@54163 slave " +
		"837f99ad6a8842a2336c0f4ebfaa653461e27302 0 1796316855000 1 connected\n" +
		"dd389f75f74c7585671b3d1b04ac0125aa1bdab3 127.0.0.1:40113@50113 master - 0 " +
		"1796316854012 3 connected 10923-16383\n" +
		"8fe4242fa0f897a010ca3dfb499cea49d84f8bbe 127.0.0.1:46143@56143 master - 0 " +
		"1796316855520 2 connected 5461-10922\n" +
		"f50446da834d6a4bfa8a35706db7f6827bd7f847 127.0.0.1:46653@56653 master - 0 " +
		"1796316855000 5 connected\n" +
		"837f99ad6a8842a2336c0f4ebfaa653461e27302 127.0.0.1:32957@42957 master - 0 " +
		"1796316855924 1 connected 0-5460"
	short, spare := clusterShortOfReplicas(nodes, 1)
	if !slices.Equal(short, []string{"8fe4242fa0f897a010ca3dfb499cea49d84f8bbe"}) ||
		!slices.Equal(spare, []string{"127.0.0.1:46653"}) {
		t.Fatalf("short %v, spare %v; want the master of 5461-10922 short, 127.0.0.1:46653 spare", short, spare)
	}
	whole := `a 127.0.0.1:1@2 master - 0 0 1 connected 0-5460
b 127.0.0.1:3@4 master - 0 0 2 connected 5461-10922
c 127.0.0.1:5@6 master - 0 0 3 connected 10923-16383
d 127.0.0.1:7@8 slave a 0 0 1 connected
e 127.0.0.1:9@10 slave b 0 0 2 connected
f 127.0.0.1:11@12 slave c 0 0 3 connected`
	if short, spare := clusterShortOfReplicas(whole, 1); len(short) != 0 || len(spare) != 0 {
		t.Fatalf("a whole cluster: short %v, spare %v", short, spare)
	}
	if short, _ := clusterShortOfReplicas(whole, 2); len(short) != 3 {
		t.Fatalf("two replicas wanted of each: short %v, want each master once", short)
	}
}
