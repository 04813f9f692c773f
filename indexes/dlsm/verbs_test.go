package dlsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

func key(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i*2+2) }

// between(i) falls between loaded keys i and i+1.
func between(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i*2+3) }

func load(n uint64) iter.Seq2[[]byte, []byte] { return indextest.Pairs(n, key, key) }

// testMemtable holds 512 entries of 8-byte keys and values (32-byte
// entries), so 1,000 loaded keys make two level-1 tables.
const testMemtable = 16 << 10

func newSim(t *testing.T, comps int) transport.Fabric {
	t.Helper()
	cfg := transport.Config{ComputeNodes: comps, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
	f, err := sim.New(cfg, sim.CX6)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func build(t *testing.T, f transport.Fabric) *Index {
	t.Helper()
	x := indextest.Build(t, "dlsm", indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 4 << 20},
		map[string]string{"memtable": fmt.Sprint(testMemtable)}).(*Index)
	if err := x.BulkLoad(f.Setup(f.Config().ComputeNodeIDs()[0]), load(1000)); err != nil {
		t.Fatal(err)
	}
	return x
}

// exact checks that an operation issued exactly the listed verbs.
func exact(want map[transport.VerbKind][3]uint64) func(transport.Counters) error {
	return func(got transport.Counters) error {
		var n uint64
		for k, w := range want {
			if c := got[k]; c.Count != w[0] || (w[1] != 0 && c.BytesOut != w[1]) || (w[2] != 0 && c.BytesIn != w[2]) {
				return fmt.Errorf("%v: got %+v, want %d of %d/%d bytes", k, c, w[0], w[1], w[2])
			}
			n += w[0]
		}
		if got.Verbs() != n {
			return fmt.Errorf("got %+v, want %d verbs", got, n)
		}
		return nil
	}
}

var none = exact(nil)

func expect(c indexes.Client, i uint64) error {
	v, ok, err := c.Search(key(i))
	if err != nil || !ok || string(v) != string(key(i)) {
		return fmt.Errorf("search %d: %x %v %v", i, v, ok, err)
	}
	return nil
}

// Golden verb counts: the sequences doc.go lists.
func TestVerbsPerOperation(t *testing.T) {
	f := newSim(t, 1)
	x := build(t, f)
	esz := uint64(x.f.esz)
	type op struct {
		name string
		do   func(c indexes.Client) error
		want func(transport.Counters) error
	}
	scanned := 0
	ops := []op{
		{"search in a level", func(c indexes.Client) error { return expect(c, 10) },
			exact(map[transport.VerbKind][3]uint64{transport.VerbRead: {1, 0, esz}})},
		{"search absent", func(c indexes.Client) error {
			if _, ok, err := c.Search(key(5000)); ok || err != nil {
				return fmt.Errorf("absent key found (%v)", err)
			}
			return nil
		}, none},
		{"insert", func(c indexes.Client) error { return c.Insert(key(5000), key(5000)) }, none},
		{"search in the memtable", func(c indexes.Client) error { return expect(c, 5000) }, none},
		{"update", func(c indexes.Client) error { return c.Update(key(20), key(20)) }, none},
		{"update absent", func(c indexes.Client) error {
			if err := c.Update(key(6000), key(1)); !errors.Is(err, indexes.ErrNotFound) {
				return fmt.Errorf("update of an absent key: %v", err)
			}
			return nil
		}, none},
		{"delete", func(c indexes.Client) error { return c.Delete(key(30)) }, none},
		{"search deleted", func(c indexes.Client) error {
			if _, ok, err := c.Search(key(30)); ok || err != nil {
				return fmt.Errorf("deleted key found (%v)", err)
			}
			return nil
		}, none},
		{"scan 50", func(c indexes.Client) error {
			return c.Scan(key(100), 50, func(k, v []byte) bool { scanned++; return true })
		}, exact(map[transport.VerbKind][3]uint64{transport.VerbRead: {1, 0, prefetchBytes / esz * esz}})},
	}
	named := make([]indextest.Op[indexes.Client], len(ops))
	for i, o := range ops {
		named[i] = indextest.Op[indexes.Client]{Name: o.name, Do: o.do}
	}
	got := indextest.VerbsPerOp(t, f, f.Config().ComputeNodeIDs()[0], x.NewClient, nil, named)
	for i, o := range ops {
		if err := o.want(got[i]); err != nil {
			t.Errorf("%s: %v", o.name, err)
		}
	}
	if scanned != 50 {
		t.Errorf("scan passed %d entries, want 50", scanned)
	}
}

// The insert that fills the memtable flushes it (three WRITEs: data,
// index block, filter and footer) and compacts level 0 into level 1 on
// the memory node (one RPC, then one READ of each output table's index
// block and filter).
func TestVerbsFlushAndCompaction(t *testing.T) {
	f := newSim(t, 1)
	x := build(t, f)
	per := testMemtable / x.f.esz
	fill := func(c indexes.Client, _ transport.Endpoint) {
		for i := range per {
			if err := c.Insert(between(uint64(i)), key(1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	ops := []indextest.Op[indexes.Client]{{Name: "insert that flushes", Do: func(c indexes.Client) error { return c.Insert(key(4000), key(1)) }}}
	got := indextest.VerbsPerOp(t, f, f.Config().ComputeNodeIDs()[0], x.NewClient, fill, ops)[0]
	v := x.shards[0].ver
	if len(v.levels[0]) != 0 || len(v.levels[1]) != 3 {
		t.Fatalf("levels after the flush: %d tables in level 0, %d in level 1; want 0 and 3", len(v.levels[0]), len(v.levels[1]))
	}
	tableBytes := per*(x.f.esz+x.f.isz) + (per*x.f.bloomBits+7)/8 + 1 + footerBytes
	want := exact(map[transport.VerbKind][3]uint64{
		transport.VerbWrite: {3, uint64(tableBytes), 0},
		transport.VerbRPC:   {1, 0, 0},
		transport.VerbRead:  {2, 0, 0},
	})
	if err := want(got); err != nil {
		t.Error(err)
	}
	// Every key is still there, through memtable, level 1 and a scan.
	f.Go(f.Config().ComputeNodeIDs()[0], 0, func(ep transport.Endpoint) {
		c := x.NewClient(ep)
		for _, k := range [][]byte{key(0), key(999), between(0), between(uint64(per) - 1), key(4000)} {
			if _, ok, err := c.Search(k); !ok || err != nil {
				t.Errorf("key %x lost after compaction (%v)", k, err)
			}
		}
		n := 0
		if err := c.Scan(key(0), 1<<20, func(k, v []byte) bool { n++; return true }); err != nil {
			t.Error(err)
		}
		if want := 1000 + per + 1; n != want {
			t.Errorf("scan of everything: %d entries, want %d", n, want)
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
}

// An operation on a key another compute node owns is one RPC to it.
func TestVerbsForwarded(t *testing.T) {
	f := newSim(t, 2)
	x := build(t, f)
	far := uint64(1)<<63 + 5 // owned by the second compute node
	k := binary.BigEndian.AppendUint64(nil, far)
	ops := []indextest.Op[indexes.Client]{
		{Name: "insert", Do: func(c indexes.Client) error { return c.Insert(k, k) }},
		{Name: "search", Do: func(c indexes.Client) error {
			if v, ok, err := c.Search(k); !ok || err != nil || string(v) != string(k) {
				return fmt.Errorf("forwarded search: %x %v %v", v, ok, err)
			}
			return nil
		}},
	}
	if x.owner(k) != 1 {
		t.Fatalf("key %x owned by shard %d, want 1", k, x.owner(k))
	}
	got := indextest.VerbsPerOp(t, f, f.Config().ComputeNodeIDs()[0], x.NewClient, nil, ops)
	for i, o := range ops {
		if err := exact(map[transport.VerbKind][3]uint64{transport.VerbRPC: {1, 0, 0}})(got[i]); err != nil {
			t.Errorf("%s: %v", o.Name, err)
		}
	}
}
