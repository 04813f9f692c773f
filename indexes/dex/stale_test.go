package dex

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// TestConcurrentSharedSplitStaleCopy: compute nodes A and B split the
// shared level-1 node they both own leaves under, concurrently and many
// times over (RDMA locks on the shared node, section 4), while compute
// node C, which owns leaves under it too, holds its cached copy from
// before. C must then serve its own keys through the stale copy, split its
// own leaves under it (the stale parent's version mismatch sends it to
// refresh the shared path, Algorithm 1 line 40), and every node must read
// every key and scan the whole tree in order.
func TestConcurrentSharedSplitStaleCopy(t *testing.T) {
	cfg := transport.Config{
		ComputeNodes: 3, MemoryNodes: 2, Threads: 2,
		MemoryCores: 2, ComputeCores: 1, MemoryBytes: 256 << 20,
		Mode: transport.ModePaper, Seed: 11,
	}
	f := indextest.SimFabric(t, cfg, sim.CX5)
	// A owns [0, 3000), B [3000, 3600), C [3600, inf): the bulk-loaded
	// level-1 node [0, 4234) crosses both bounds.
	bounds := []uint64{0, 3000, 3600}
	env := indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 1 << 20,
		Partitions: [][]byte{key(bounds[0]), key(bounds[1]), key(bounds[2])}}
	x := indextest.Build(t, "dex", env, map[string]string{"offload": "off", "admission": "eager"}).(*Index)
	const top = 12000
	if err := x.BulkLoad(f.Setup(2), loadSeq(top/2, 2)); err != nil {
		t.Fatal(err)
	}
	a, b, c := transport.NodeID(2), transport.NodeID(3), transport.NodeID(4)
	run := func(jobs map[transport.NodeID][]func(*client)) {
		t.Helper()
		for n, js := range jobs {
			for th, j := range js {
				f.Go(n, th, func(ep transport.Endpoint) { j(x.newClient(ep)) })
			}
		}
		if err := f.Run(); err != nil {
			t.Fatal(err)
		}
	}
	searchAll := func(from, to uint64, present func(uint64) bool) func(*client) {
		return func(cl *client) {
			for k := from; k < to; k++ {
				if err := search(k, present(k))(cl); err != nil {
					t.Errorf("node %d: %v", cl.ep.Node(), err)
					return
				}
			}
		}
	}
	even := func(k uint64) bool { return k%2 == 0 && k > 0 && k <= top }
	inserts := func(from, to uint64) func(*client) {
		return func(cl *client) {
			for k := from | 1; k < to; k += 4 {
				if err := cl.Insert(key(k), val(k+1)); err != nil {
					t.Errorf("node %d: insert %d: %v", cl.ep.Node(), k, err)
					return
				}
			}
		}
	}
	// Every node caches the root, the shared level-1 node and its leaves.
	run(map[transport.NodeID][]func(*client){
		a: {searchAll(0, bounds[1], even)},
		b: {searchAll(bounds[1], bounds[2], even)},
		c: {searchAll(bounds[2], 4234, even)},
	})
	cn := x.cn[2]
	root := cn.root.Load()
	p := cn.frames[x.l.child(root.data, 0)&^swizzled]
	stale := p.rver.Load()
	// Two threads of A and two of B each insert every other odd key of
	// their node's range.
	run(map[transport.NodeID][]func(*client){
		a: {inserts(1, bounds[1]), inserts(3, bounds[1])},
		b: {inserts(bounds[1]+1, bounds[2]), inserts(bounds[1]+3, bounds[2])},
	})
	remote := make(node, NodeBytes)
	if err := x.readNode(f.Setup(c), transport.GAddr(p.addr.Load()), true, remote); err != nil {
		t.Fatal(err)
	}
	if p.rver.Load() != stale || remote.lockWord() <= stale {
		t.Fatalf("compute node C's cached copy is at version %d, the remote node at %d: not stale", p.rver.Load(), remote.lockWord())
	}
	if bytes.Equal(x.l.highKey(remote), x.l.highKey(p.data)) {
		t.Fatalf("the shared level-1 node was not split (high fence %x, cached %x)", x.l.highKey(remote), x.l.highKey(p.data))
	}
	abOdd := func(k uint64) bool { return even(k) || k%2 == 1 && k < bounds[2] }
	// C serves its keys through its stale copy, then splits its leaves.
	run(map[transport.NodeID][]func(*client){
		c: {searchAll(bounds[2], 4400, even)},
	})
	run(map[transport.NodeID][]func(*client){
		c: {inserts(bounds[2]+1, 4400), inserts(bounds[2]+3, 4400)},
	})
	all := func(k uint64) bool { return abOdd(k) || k%2 == 1 && k < 4400 }
	run(map[transport.NodeID][]func(*client){
		a: {searchAll(0, 4600, all)},
		b: {searchAll(0, 4600, all)},
		c: {searchAll(0, 4600, all)},
	})
	var want [][]byte
	for k := uint64(1); k <= top; k++ {
		if all(k) {
			want = append(want, key(k))
		}
	}
	for _, n := range []transport.NodeID{a, b, c} {
		run(map[transport.NodeID][]func(*client){n: {func(cl *client) {
			var got [][]byte
			err := cl.Scan(key(0), len(want)+1, func(k, v []byte) bool {
				if binary.LittleEndian.Uint64(v) != binary.BigEndian.Uint64(k)+1 {
					t.Errorf("node %d: scan: %x -> %x", n, k, v)
				}
				got = append(got, bytes.Clone(k))
				return true
			})
			if err != nil {
				t.Errorf("node %d: scan: %v", n, err)
				return
			}
			if len(got) != len(want) {
				t.Errorf("node %d: scan returned %d entries, want %d", n, len(got), len(want))
				return
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("node %d: scan entry %d = %x, want %x", n, i, got[i], want[i])
					return
				}
			}
		}}})
	}
}
