package combine

import (
	"slices"
	"testing"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// Three writers of one key on each of two compute nodes: each node's
// table combines its own writers only, every WRITE carries the last value
// dropped in on its node, and Nodes.Sizes sums the nodes. Without tables
// (nil Nodes) every write runs on its own with its own value.
func TestNodes(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 2, MemoryNodes: 1, Threads: 3, MemoryCores: 1, ComputeCores: 3, MemoryBytes: 1 << 20}
	for _, on := range []bool{true, false} {
		f, err := sim.New(cfg, sim.CX6)
		if err != nil {
			t.Fatal(err)
		}
		var ns Nodes
		if on {
			ns = NewNodes(cfg, ReadWindow)
		}
		written := map[transport.NodeID][]string{}
		for _, n := range cfg.ComputeNodeIDs() {
			for i := range 3 {
				f.Go(n, i, func(ep transport.Endpoint) {
					c := ns.Client(ep)
					ep.Compute(int64(i)) // arrive in order
					v := []byte{byte('a' + i)}
					err := c.Write(Update, []byte("k"), v, func() error {
						written[n] = append(written[n], string(c.CutWrite(v)))
						ep.Compute(2000) // the remote write, after the cut
						return nil
					})
					if err != nil {
						t.Error(err)
					}
				})
			}
		}
		if err := f.Run(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		want := []string{"a", "c"}
		if !on {
			want = []string{"a", "b", "c"}
		}
		for _, n := range cfg.ComputeNodeIDs() {
			if got := written[n]; !slices.Equal(got, want) {
				t.Errorf("combining %v: node %d wrote %q; want %q", on, n, got, want)
			}
		}
		_, writes := ns.Sizes()
		if on && (writes.Rounds() != 4 || writes.Ops() != 6) || !on && writes.Rounds() != 0 {
			t.Errorf("combining %v: %d write rounds served %d ops; want 4 and 6 (0 without tables)", on, writes.Rounds(), writes.Ops())
		}
	}
}

// CopyCounts gives a node the round counts of another, as if it had run
// the same operations; the source keeps its own.
func TestCopyCounts(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 2, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 1 << 20}
	f, err := sim.New(cfg, sim.CX6)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ns := NewNodes(cfg, ReadWindow)
	ids := cfg.ComputeNodeIDs()
	f.Go(ids[0], 0, func(ep transport.Endpoint) {
		c := ns.Client(ep)
		for range 3 {
			if _, _, err := c.Search([]byte("k"), func() ([]byte, bool, error) { return nil, false, nil }); err != nil {
				t.Error(err)
			}
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	ns.CopyCounts(ns, ids[0], ids[1])
	for _, n := range ids {
		if got := ns[n].reads.Sizes(); got.Rounds() != 3 || got.Ops() != 3 {
			t.Errorf("node %d: %d read rounds of %d ops after the copy; want 3 and 3", n, got.Rounds(), got.Ops())
		}
	}
}
