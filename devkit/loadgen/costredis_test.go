package loadgen

import "testing"

// A memory reading is used_memory less the clients' buffers (mem_clients_normal), which move
// with the connections, not the data; INFO without either is an error.
func TestParseMemorySubtractsClientBuffers(t *testing.T) {
	info := "# Memory\r\nused_memory:5331296\r\nused_memory_human:5.08M\r\nused_memory_dataset:4253840\r\n" +
		"mem_clients_slaves:0\r\nmem_clients_normal:255264\r\n"
	if m, err := parseMemory(info); err != nil || m != 5331296-255264 {
		t.Errorf("parseMemory = %d, %v; want %d", m, err, 5331296-255264)
	}
	for _, bad := range []string{"used_memory:1\r\n", "mem_clients_normal:1\r\n",
		"used_memory:x\r\nmem_clients_normal:1\r\n"} {
		if m, err := parseMemory(bad); err == nil {
			t.Errorf("parseMemory(%q) = %d, no error", bad, m)
		}
	}
}

// The settled reading is the samples' median: a transient peak or dip among them (a periodic
// job's allocations, the setup's last buffers) is not read, wherever it falls.
func TestMedianSkipsTransients(t *testing.T) {
	for _, s := range [][]int64{
		{4827568, 4745984, 4725512, 4725512, 4725512, 4725512, 4725512, 4725512, 4908664},
		{4725512, 4725512, 4725512, 4725512, 4725512, 4725512, 4725512, 4827568, 4908664},
		{4725512, 4725512, 4725512, 4625512, 4725512, 4725512, 4725512, 4725512, 4725512},
	} {
		if m := median(s); m != 4725512 {
			t.Errorf("median = %d, want 4725512", m)
		}
	}
}
