package smart

import (
	"encoding/binary"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// TestDelegatedAnswerRead: read delegation hands a leader's answer only
// to searchers that joined before the READ the answer rests on, which is
// not always the leader's last READ. A negative answer at a node reached
// from a cached slot rests on the node's READ, not on the READ of the
// slot that confirms it: an insert may complete between the two, and a
// searcher joining then must not take the stale absent (as it did, on
// the local fabric, in the linearizability case of split mode).
func TestDelegatedAnswerRead(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
	f := indextest.SimFabric(t, cfg, sim.CX6)
	env := indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 4 << 20}
	x := indextest.Build(t, "smart", env, nil).(*Index)
	// The root: 5 prefix bytes of zeros and slots for bytes 1 (a node)
	// and 2 (a leaf); the node's slots for bytes 1 (a node with slots for
	// bytes 1-3) and 2 (a leaf). The root is never cached: its child is
	// the cached node whose slot leads to the node of the leaves.
	k := func(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }
	keys := []uint64{0x010101, 0x010102, 0x010103, 0x010201, 0x020001}
	kv := func(i uint64) []byte { return k(keys[i]) }
	if err := x.BulkLoad(f.Setup(0), indextest.Pairs(uint64(len(keys)), kv, kv)); err != nil {
		t.Fatal(err)
	}
	f.Go(cfg.ComputeNodeIDs()[0], 0, func(ep transport.Endpoint) {
		c := x.NewClient(ep).(*client)
		cases := []struct {
			name     string
			key      []byte
			found    bool
			at, last int64 // READs of the search: the answer's, all
		}{
			// READ root slot, root, node, node: no slot for byte 4.
			// Read from memory, the path holds from the root slot's
			// READ on.
			{"absent, cold cache", k(0x010104), false, 1, 4},
			// READ leaf.
			{"found, warm cache", k(0x010101), true, 1, 1},
			// The cached node of the leaves has no slot for byte 4:
			// READ the node its cached parent's slot leads to, then
			// that slot to confirm the absent.
			{"absent at a cached node", k(0x010104), false, 1, 2},
		}
		for _, tc := range cases {
			base := c.reads
			_, ok, at, err := c.search(tc.key)
			if err != nil || ok != tc.found || at-base != tc.at || c.reads-base != tc.last {
				t.Errorf("%s: search %x = found %v, answer from READ %d of %d, %v; want found %v, READ %d of %d",
					tc.name, tc.key, ok, at-base, c.reads-base, err, tc.found, tc.at, tc.last)
			}
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
}
