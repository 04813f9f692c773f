package dmtree

import (
	"bytes"
	"slices"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// A compute node fails after acknowledging writes: its region (primary
// tables, locks, cached copies) is lost, here overwritten with garbage.
// The survivors re-own its tables through the ring, rebuild them from the
// leaves, and every acknowledged write is still found; writes continue.
func TestComputeNodeFailureLosesNoAcknowledgedWrite(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 3, MemoryNodes: 1, Threads: 2, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 256 << 20}
	f := indextest.SimFabric(t, cfg, sim.CX6)
	d := indextest.Build(t, "dmtree", indexes.Env{Fabric: f, KeySize: ks, ValueSize: vs, CacheBytes: 8 << 20},
		map[string]string{"span": "8", "internal_span": "8", "fp_region_bytes": "1048576"}).(*DMTree)
	if err := d.BulkLoad(f.Setup(1), loaded(1000)); err != nil {
		t.Fatal(err)
	}
	acked := map[string][]byte{}
	for i := range uint64(1000) {
		acked[string(key(i*3))] = val(i * 3)
	}
	// Every thread of every node inserts its own keys and updates loaded
	// ones; what returns without error is acknowledged.
	type write struct{ k, v []byte }
	var done [3][2][]write
	for n := range 3 {
		for th := range 2 {
			f.Go(transport.NodeID(1+n), th, func(ep transport.Endpoint) {
				c := d.NewClient(ep)
				for i := range uint64(300) {
					w := write{key(i*3 + 1 + uint64(n*2+th)*100000), val(i + 1<<20)}
					if i%3 == 0 {
						w = write{key((uint64(n*2+th)*150 + i/3) * 3), val(i + 2<<20)}
						if err := c.Update(w.k, w.v); err != nil {
							t.Error(err)
							return
						}
					} else if err := c.Insert(w.k, w.v); err != nil {
						t.Error(err)
						return
					}
					done[n][th] = append(done[n][th], w)
				}
			})
		}
	}
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	for n := range done {
		for th := range done[n] {
			for _, w := range done[n][th] {
				acked[string(w.k)] = w.v
			}
		}
	}
	const failed = transport.NodeID(3)
	r, err := f.Region(failed, regionName)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Setup(failed).Write(r.Base, bytes.Repeat([]byte{0xa5}, int(r.Size))); err != nil {
		t.Fatal(err)
	}
	var rebuilt int
	f.Go(1, 0, func(ep transport.Endpoint) {
		if rebuilt, err = d.FailComputeNode(ep, failed); err != nil {
			t.Error(err)
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	if rebuilt == 0 {
		t.Fatal("no table was rebuilt: the failed node was primary for none")
	}
	t.Logf("%d tables rebuilt after compute node %d failed", rebuilt, failed)
	f.ResetStats()
	for _, n := range []transport.NodeID{1, 2} {
		f.Go(n, 0, func(ep transport.Endpoint) {
			c := d.NewClient(ep)
			for i := range uint64(100) {
				k := key(i*3 + 2 + uint64(n)*1000000)
				if err := c.Insert(k, val(i)); err != nil {
					t.Error(err)
					return
				}
			}
			for i := range uint64(4000) {
				k := key(i)
				want, ok := acked[string(k)]
				got, found, err := c.Search(k)
				if err != nil || found != ok || !bytes.Equal(got, want) {
					t.Errorf("node %d: search %x after the failure = %x, %v, %v; want %x, %v", n, k, got, found, err, want, ok)
					return
				}
			}
			for _, kk := range sortedKeys(acked) {
				if got, found, err := c.Search([]byte(kk)); err != nil || !found || !bytes.Equal(got, acked[kk]) {
					t.Errorf("node %d: acknowledged key %x lost: %x, %v, %v", n, kk, got, found, err)
					return
				}
			}
		})
	}
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); int(failed) < len(st.Verbs.ByNode) && st.Verbs.ByNode[failed].Verbs() != 0 {
		t.Errorf("%d verbs went to the failed node after recovery", st.Verbs.ByNode[failed].Verbs())
	}
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
