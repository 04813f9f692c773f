package smart

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// TestFollowBehindSwitchesType: a writer whose CAS behind a full node
// loses to another writer's entry with its key byte, and that follows the
// entry down (splitting its leaf), must not return before the node's type
// covers the slot; otherwise a reader on another compute node, reading as
// many slots as the type says, misses the key whose insert has returned.
// The other writer is caught between its CAS and its type switch: its
// leaf is put behind the full root by hand, with no switch.
func TestFollowBehindSwitchesType(t *testing.T) {
	for _, p := range []map[string]string{nil, {"maskedcas": "false"}, {"partitioned": "true"}} {
		cfg := transport.Config{ComputeNodes: 2, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
		f := indextest.SimFabric(t, cfg, sim.CX6)
		env := indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 4 << 20}
		if p["partitioned"] == "true" {
			env.Partitions = indextest.Partitions(1, 8)
		}
		x := indextest.Build(t, "smart", env, p).(*Index)
		// The root: 6 prefix bytes of zeros, then byte 6 = 1-4 in its
		// four slots (type 4, full).
		k := func(b6, b7 byte) []byte { return binary.BigEndian.AppendUint64(nil, uint64(b6)<<8|uint64(b7)) }
		var loaded [][]byte
		for b := byte(1); b <= 4; b++ {
			loaded = append(loaded, k(b, 0))
		}
		setup := f.Setup(cfg.ComputeNodeIDs()[0])
		if err := x.BulkLoad(setup, func(yield func([]byte, []byte) bool) {
			for _, key := range loaded {
				if !yield(key, key) {
					return
				}
			}
		}); err != nil {
			t.Fatal(err)
		}
		// The stranded writer: its leaf for byte 5 in slot 4, past the
		// capacity, and no type switch yet.
		var b [8]byte
		if err := setup.Read(b[:], x.rootPtr); err != nil {
			t.Fatal(err)
		}
		root := slotTarget(binary.LittleEndian.Uint64(b[:]))
		at := slotAddr(root, capacity(0))
		stranded := k(5, 0)
		leafAt, err := x.setupMem.Alloc(setup, x.ll.alloc, allocAlign)
		if err != nil {
			t.Fatal(err)
		}
		if err := setup.Write(leafAt, x.ll.encode(at, stranded, stranded, true, 0)); err != nil {
			t.Fatal(err)
		}
		if old, err := setup.CAS(at, 0, leafSlot(5, leafAt, x.ll.size)); err != nil || old != 0 {
			t.Fatalf("placing the stranded leaf: old slot %#x, %v", old, err)
		}

		key := k(5, 1)
		writer, reader := cfg.ComputeNodeIDs()[0], cfg.ComputeNodeIDs()[1]
		f.Go(writer, 0, func(ep transport.Endpoint) {
			if err := x.NewClient(ep).Insert(key, key); err != nil {
				t.Errorf("%v: insert %x: %v", p, key, err)
			}
		})
		if err := f.Run(); err != nil {
			t.Fatal(err)
		}
		f.Go(reader, 0, func(ep transport.Endpoint) {
			c := x.NewClient(ep)
			if _, ok, err := c.Search(key); err != nil || !ok {
				t.Errorf("%v: search %x from another compute node after its insert returned: found %v, %v", p, key, ok, err)
			}
			var got [][]byte
			if err := c.Scan(k(0, 0), 10, func(k, _ []byte) bool { got = append(got, bytes.Clone(k)); return true }); err != nil {
				t.Errorf("%v: scan: %v", p, err)
			}
			if want := slices.Concat(loaded, [][]byte{stranded, key}); !slices.EqualFunc(got, want, bytes.Equal) {
				t.Errorf("%v: scan from another compute node = %x, want %x", p, got, want)
			}
		})
		if err := f.Run(); err != nil {
			t.Fatal(err)
		}
	}
}
