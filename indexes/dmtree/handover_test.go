package dmtree

import (
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// Two coroutines of one compute node update different keys of one leaf
// at once: the second queues on the node's local lock instead of CASing
// the remote lock word, and the first hands the word over with it, so the
// pair costs one lock CAS and one unlock WRITE at the primary's node
// (write combining's local lock table, section 4.1 after Sherman). A
// later update from another node then finds the word released.
func TestLocalLockHandOver(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 3, MemoryNodes: 1, Threads: 2, MemoryCores: 1, ComputeCores: 2, MemoryBytes: 256 << 20}
	f := indextest.SimFabric(t, cfg, sim.CX6)
	d := indextest.Build(t, "dmtree", indexes.Env{Fabric: f, KeySize: ks, ValueSize: vs, CacheBytes: 8 << 20}, nil).(*DMTree)
	const records = 2400
	if err := d.BulkLoad(f.Setup(1), loaded(records)); err != nil {
		t.Fatal(err)
	}
	me := transport.NodeID(1)
	// A leaf whose primary table is on a peer; warm its cache entry.
	var j uint64
	f.Go(me, 0, func(ep transport.Endpoint) {
		c := d.Tree.Client(ep)
		for j = 1; j < records/24-1; j++ {
			_, fp, err := c.Locate(key(j * 72))
			if err != nil {
				t.Error(err)
				return
			}
			if p, _ := d.PrimaryNode(fp); p != me {
				break
			}
		}
		for i := range uint64(24) {
			if _, _, err := c.Search(key(j*72 + 3*i)); err != nil {
				t.Error(err)
			}
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	f.ResetStats()
	for th, k := range []uint64{j*72 + 3, j*72 + 6} {
		f.Go(me, th, func(ep transport.Endpoint) {
			if err := d.Tree.Client(ep).Update(key(k), val(k+1)); err != nil {
				t.Error(err)
			}
		})
	}
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	var peers transport.Counters
	st := f.Stats()
	for _, n := range f.Config().ComputeNodeIDs() {
		if int(n) < len(st.Verbs.ByNode) {
			peers.Add(&st.Verbs.ByNode[n])
		}
	}
	if peers[cas].Count != 1 || peers[wr].Count != 1 || peers[rd].Count != 2 {
		t.Errorf("two local updates of one leaf: peers served %v; want one CAS, one unlock WRITE, two table READs", peers)
	}
	f.Go(2, 0, func(ep transport.Endpoint) {
		c := d.Tree.Client(ep)
		if err := c.Update(key(j*72+9), val(1)); err != nil {
			t.Error(err)
		}
		for _, k := range []uint64{j*72 + 3, j*72 + 6} {
			if v, ok, err := c.Search(key(k)); err != nil || !ok || string(v) != string(val(k+1)) {
				t.Errorf("search %d after the updates = %x, %v, %v; want %x", k, v, ok, err, val(k+1))
			}
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
}
