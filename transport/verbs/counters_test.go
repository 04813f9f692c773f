package verbs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fakeRoot = "testdata/sys/class/infiniband"

func TestReadPortCountersFakeTree(t *testing.T) {
	c, err := ReadPortCounters(fakeRoot, "mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want uint64
		ok   bool
	}{
		{"port_xmit_data", 4000, true}, // 1000 words of 4 bytes
		{"port_rcv_data", 1000, true},
		{"port_xmit_packets", 7, true},
		{"out_of_sequence", 3, true},
		{"local_ack_timeout_err", 12, true},
		{"rx_atomic_requests", 4, true},
		{"no_such_counter", 0, false},
	} {
		if got, ok := c.Bytes(tc.name); got != tc.want || ok != tc.ok {
			t.Errorf("Bytes(%q) = %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if c.TxBytes() != 4000 || c.RxBytes() != 1000 {
		t.Errorf("TxBytes, RxBytes = %d, %d; want 4000, 1000 (words times 4)", c.TxBytes(), c.RxBytes())
	}
	if c.Counters["port_xmit_data"] != 1000 {
		t.Errorf("raw port_xmit_data = %d, want the 1000 words sysfs holds", c.Counters["port_xmit_data"])
	}
}

func TestReadPortCountersWithoutHW(t *testing.T) {
	c, err := ReadPortCounters(fakeRoot, "mlx5_0", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.HW) != 0 || c.TxBytes() != 20 {
		t.Errorf("port 2: HW %v, TxBytes %d; want none and 20", c.HW, c.TxBytes())
	}
}

func TestReadPortCountersErrors(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "dev0", "ports", "1", "counters")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "port_rcv_data"), []byte("lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dev  string
		port int
		want string
	}{
		{"dev0", 1, "port_rcv_data holds \"lots\", not a counter"},
		{"dev0", 3, "counters of dev0 port 3"},
		{"nodev", 1, "counters of nodev port 1"},
	} {
		_, err := ReadPortCounters(root, tc.dev, tc.port)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadPortCounters(%s, %d) = %v, want an error containing %q", tc.dev, tc.port, err, tc.want)
		}
	}
}

func TestPortCountersSub(t *testing.T) {
	before := PortCounters{Counters: map[string]uint64{"port_xmit_data": 100, "port_rcv_data": 50}, HW: map[string]uint64{"out_of_sequence": 2}}
	after := PortCounters{Counters: map[string]uint64{"port_xmit_data": 160, "port_rcv_data": 10, "port_rcv_packets": 3}, HW: map[string]uint64{"out_of_sequence": 5}}
	d := after.Sub(before)
	if d.TxBytes() != 240 || d.Counters["port_rcv_data"] != 10 || d.Counters["port_rcv_packets"] != 3 || d.HW["out_of_sequence"] != 3 {
		t.Errorf("Sub = %+v; want xmit 60 words (240 B), rcv 10 (wrapped: its later value), packets 3, out_of_sequence 3", d)
	}
}
