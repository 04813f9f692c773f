package smart

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// key(i) is the 8-byte big-endian number 0x100+i: 700 loaded keys fill
// the nodes of key bytes 0x01 and 0x02 (256 leaves each, type 256) and
// 188 slots of the node of byte 0x03 (type 256); the root holds those
// three slots after its 6-byte prefix of zeros (type 4). The root is
// never cached, so an operation that needs a slot of the root (its key's
// node is not cached or has no slot for it) READs the root slot and the
// root first.
func key(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, 0x100+i) }

type want map[transport.VerbKind][2]uint64 // verb: count, bytes moved both ways (an atomic: 8 out, 8 back)

// Golden verb counts per operation: the sequences doc.go lists.
func TestVerbsPerOperation(t *testing.T) {
	for _, masked := range []bool{true, false} {
		t.Run(fmt.Sprintf("maskedcas=%v", masked), func(t *testing.T) {
			lock := transport.VerbMaskedCAS
			if !masked {
				lock = transport.VerbCAS
			}
			const leaf, body = 34, 26 // leaf READ; in-place WRITE after the reverse pointer
			node := func(t int) uint64 { return uint64(nodeReadBytes(t)) }
			runVerbs(t, map[string]string{"maskedcas": fmt.Sprint(masked)}, []verbOp{
				{"search, cold cache", search(0x50, true),
					want{transport.VerbRead: {4, 8 + node(0) + node(6) + leaf}}},
				{"search, warm cache", search(0x50, true),
					want{transport.VerbRead: {1, leaf}}},
				{"update", func(c indexes.Client) error { return c.Update(key(0x51), key(1)) },
					want{transport.VerbRead: {1, leaf}, lock: {1, 16}, transport.VerbWrite: {1, body}}},
				{"update to the value it holds", func(c indexes.Client) error { return c.Update(key(0x51), key(1)) },
					want{transport.VerbRead: {1, leaf}}},
				{"insert into a free slot", insert(0x2f0),
					want{transport.VerbRead: {3, 8 + node(0) + node(6)}, transport.VerbWrite: {1, leaf}, transport.VerbCAS: {1, 16}}},
				{"insert into a new root slot", insert(0x300),
					want{transport.VerbRead: {2, 8 + node(0)}, transport.VerbWrite: {1, leaf}, transport.VerbCAS: {1, 16}}},
				{"insert behind a full node, type switch", insert(0x400),
					typeSwitch(masked, 8+node(0), leaf)},
				{"search after the type switch", search(0x300, true),
					want{transport.VerbRead: {3, 8 + node(1) + leaf}}},
				{"insert splitting a leaf", insert(0x401),
					want{transport.VerbRead: {3, 8 + node(1) + leaf}, transport.VerbWrite: {2, node(0) + leaf}, transport.VerbCAS: {2, 32}}},
				{"delete", func(c indexes.Client) error { return c.Delete(key(0x52)) },
					deletion(masked, leaf, body)},
				{"search of the deleted key, stale cache", search(0x52, false),
					want{transport.VerbRead: {2, leaf + 8}}},
				{"scan of 10 keys", scan10, want{transport.VerbRead: {13, 8 + node(1) + node(6) + 10*leaf}}},
			})
		})
	}
}

// Golden verb counts per operation of variant=dex, DEX's copy of SMART
// (doc.go, Variants): 48-byte leaves written whole, a plain CAS lock, and
// every node of 2,064 bytes (the root too), so that no node is ever full
// and no insert goes behind one; a prefix split READs the header before
// its CAS.
func TestVerbsPerOperationDEX(t *testing.T) {
	const leaf, node = 48, 2064
	runVerbs(t, map[string]string{"variant": "dex"}, []verbOp{
		{"search, cold cache", search(0x50, true),
			want{transport.VerbRead: {4, 8 + node + node + leaf}}},
		{"search, warm cache", search(0x50, true),
			want{transport.VerbRead: {1, leaf}}},
		{"update", func(c indexes.Client) error { return c.Update(key(0x51), key(1)) },
			want{transport.VerbRead: {1, leaf}, transport.VerbCAS: {1, 16}, transport.VerbWrite: {1, leaf}}},
		{"update to the value it holds", func(c indexes.Client) error { return c.Update(key(0x51), key(1)) },
			want{transport.VerbRead: {1, leaf}}},
		{"insert into a free slot", insert(0x2f0),
			want{transport.VerbRead: {3, 8 + node + node}, transport.VerbWrite: {1, leaf}, transport.VerbCAS: {1, 16}}},
		{"insert into a new root slot", insert(0x300),
			want{transport.VerbRead: {2, 8 + node}, transport.VerbWrite: {1, leaf}, transport.VerbCAS: {1, 16}}},
		{"insert into the root's fifth slot, no type switch", insert(0x400),
			want{transport.VerbRead: {2, 8 + node}, transport.VerbWrite: {1, leaf}, transport.VerbCAS: {1, 16}}},
		{"search of a leaf in the root", search(0x300, true),
			want{transport.VerbRead: {3, 8 + node + leaf}}},
		{"insert splitting a leaf", insert(0x401),
			want{transport.VerbRead: {3, 8 + node + leaf}, transport.VerbWrite: {2, node + leaf}, transport.VerbCAS: {2, 32}}},
		{"delete", func(c indexes.Client) error { return c.Delete(key(0x52)) },
			want{transport.VerbRead: {1, leaf}, transport.VerbCAS: {2, 32}, transport.VerbWrite: {1, leaf}}},
		{"search of the deleted key, stale cache", search(0x52, false),
			want{transport.VerbRead: {2, leaf + 8}}},
		{"scan of 10 keys", scan10, want{transport.VerbRead: {13, 8 + node + node + 10*leaf}}},
		// Key 0x0100000000000000 departs from the root's prefix of six
		// zero bytes at its first byte.
		{"insert splitting the root's prefix", insert(1<<56 - 0x100),
			want{transport.VerbRead: {3, 8 + node + 8}, transport.VerbWrite: {2, node + leaf}, transport.VerbCAS: {3, 48}}},
	})
}

type verbOp struct {
	name string
	do   func(c indexes.Client) error
	want want
}

// runVerbs loads key(0) ... key(699) into a SMART with params on one
// compute node and checks the verbs of ops, run one after another.
func runVerbs(t *testing.T, params map[string]string, ops []verbOp) {
	t.Helper()
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
	f := indextest.SimFabric(t, cfg, sim.CX6)
	env := indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 4 << 20}
	x := indextest.Build(t, "smart", env, params).(*Index)
	if err := x.BulkLoad(f.Setup(0), indextest.Pairs(700, key, key)); err != nil {
		t.Fatal(err)
	}
	named := make([]indextest.Op[indexes.Client], len(ops))
	for i, o := range ops {
		named[i] = indextest.Op[indexes.Client]{Name: o.name, Do: o.do}
	}
	// The compute node's first chunk of memory comes by RPC: get it
	// before the counted operations.
	warm := func(_ indexes.Client, ep transport.Endpoint) {
		if _, err := x.nodes[ep.Node()].alloc.Alloc(ep, allocAlign, allocAlign); err != nil {
			t.Fatal(err)
		}
	}
	for i, got := range indextest.VerbsPerOp(t, f, 1, x.NewClient, warm, named) {
		if err := ops[i].want.check(got); err != nil {
			t.Errorf("%s: %v", ops[i].name, err)
		}
	}
}

func scan10(c indexes.Client) error {
	n := 0
	return checkN(c.Scan(key(0x60), 10, func(k, v []byte) bool { n++; return true }), &n, 10)
}

// typeSwitch is an insert behind a full root: READ the root slot and the
// root (reads bytes), WRITE the leaf, CAS the slot past the capacity,
// then the type switch of the parent slot and the header in one batch.
func typeSwitch(masked bool, reads, leaf uint64) want {
	if masked {
		return want{transport.VerbRead: {2, reads}, transport.VerbWrite: {1, leaf}, transport.VerbCAS: {1, 16}, transport.VerbMaskedCAS: {2, 32}}
	}
	return want{transport.VerbRead: {2, reads}, transport.VerbWrite: {1, leaf}, transport.VerbCAS: {3, 48}}
}

// deletion is READ leaf, lock, WRITE it dead, CAS its slot to a
// tombstone.
func deletion(masked bool, leaf, body uint64) want {
	if masked {
		return want{transport.VerbRead: {1, leaf}, transport.VerbMaskedCAS: {1, 16}, transport.VerbWrite: {1, body}, transport.VerbCAS: {1, 16}}
	}
	return want{transport.VerbRead: {1, leaf}, transport.VerbWrite: {1, body}, transport.VerbCAS: {2, 32}}
}

func (w want) check(got transport.Counters) error {
	var n uint64
	for k, v := range w {
		c := got[k]
		if c.Count != v[0] || c.BytesIn+c.BytesOut != v[1] {
			return fmt.Errorf("got %v, want %d %v moving %d bytes (all: %v)", c, v[0], k, v[1], got)
		}
		n += v[0]
	}
	if got.Verbs() != n {
		return fmt.Errorf("got %d verbs (%v), want %d", got.Verbs(), got, n)
	}
	return nil
}

func search(i uint64, present bool) func(c indexes.Client) error {
	return func(c indexes.Client) error {
		v, ok, err := c.Search(key(i))
		if err == nil && (ok != present || ok && string(v) != string(key(i)) && string(v) != string(key(1))) {
			err = fmt.Errorf("search(%#x) = %x, %v", i, v, ok)
		}
		return err
	}
}

func insert(i uint64) func(c indexes.Client) error {
	return func(c indexes.Client) error { return c.Insert(key(i), key(i)) }
}

func checkN(err error, n *int, want int) error {
	if err == nil && *n != want {
		err = fmt.Errorf("scan returned %d entries, want %d", *n, want)
	}
	return err
}
