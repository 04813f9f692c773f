package ideal

import (
	"encoding/binary"
	"fmt"
	"iter"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

func key(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i*2+2) }

func load(n uint64) iter.Seq2[[]byte, []byte] { return indextest.Pairs(n, key, key) }

// Golden verb counts: exactly the Expected sequences of DMTree Figure 3.
func TestVerbsPerOperation(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
	f, err := sim.New(cfg, sim.CX6)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	idx, err := New(indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.BulkLoad(f.Setup(0), load(1000)); err != nil {
		t.Fatal(err)
	}
	want := map[string]transport.Counters{}
	set := func(name string, kind transport.VerbKind, count, out, in uint64) {
		c := want[name]
		c[kind] = transport.VerbCount{Count: count, BytesOut: out, BytesIn: in}
		want[name] = c
	}
	set("search", transport.VerbRead, 1, 0, 24)
	set("update", transport.VerbRead, 1, 0, 24)
	set("update", transport.VerbWrite, 1, 24, 0)
	set("insert", transport.VerbRead, 1, 0, 24)
	set("insert", transport.VerbWrite, 1, 24, 0)
	set("delete", transport.VerbRead, 1, 0, 24)
	set("delete", transport.VerbWrite, 1, 8, 0)
	set("scan", transport.VerbRead, 1, 0, 99*32+24)

	type client = indexes.Client
	ops := []indextest.Op[client]{
		{Name: "search", Do: func(c client) error {
			v, ok, err := c.Search(key(7))
			if err == nil && (!ok || string(v) != string(key(7))) {
				err = fmt.Errorf("search(7) = %x, %v", v, ok)
			}
			return err
		}},
		{Name: "update", Do: func(c client) error { return c.Update(key(7), key(9)) }},
		{Name: "insert", Do: func(c client) error { return c.Insert(key(5001), key(1)) }},
		{Name: "delete", Do: func(c client) error { return c.Delete(key(8)) }},
		{Name: "scan", Do: func(c client) error {
			n := 0
			err := c.Scan(key(100), 100, func(k, v []byte) bool { n++; return true })
			if err == nil && n != 100 {
				err = fmt.Errorf("scan returned %d entries, want 100", n)
			}
			return err
		}},
	}
	// Warm the allocator so the insert below costs no chunk RPC.
	warm := func(c client, _ transport.Endpoint) {
		if err := c.Insert(key(5000), key(1)); err != nil {
			t.Error(err)
		}
	}
	for i, got := range indextest.VerbsPerOp(t, f, 1, idx.NewClient, warm, ops) {
		if name := ops[i].Name; got != want[name] {
			t.Errorf("%s: verbs %+v, want %+v", name, got, want[name])
		}
	}
}

// In paper mode 100 updates of one key at once each take the bound's two
// verbs without waiting for one another; in strict mode, where an entry's
// words land in any order, they queue on the key's writer lock.
func TestHotKeyUpdatesDoNotQueue(t *testing.T) {
	const writers = 100
	span := func(mode transport.Mode) int64 {
		cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: writers, MemoryCores: 1, ComputeCores: writers,
			MemoryBytes: 64 << 20, Mode: mode}
		f := indextest.SimFabric(t, cfg, sim.CX6)
		idx, err := New(indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := idx.BulkLoad(f.Setup(0), load(1000)); err != nil {
			t.Fatal(err)
		}
		var end int64
		for i := range writers {
			f.Go(cfg.ComputeNodeIDs()[0], i, func(ep transport.Endpoint) {
				if err := idx.NewClient(ep).Update(key(7), key(uint64(i))); err != nil {
					t.Error(err)
				}
				end = max(end, ep.Now())
			})
		}
		if err := f.Run(); err != nil {
			t.Fatal(err)
		}
		return end
	}
	paper, strict := span(transport.ModePaper), span(transport.ModeStrict)
	t.Logf("%d updates of one key: %d ns in paper mode, %d ns in strict mode", writers, paper, strict)
	if paper > 20_000 {
		t.Errorf("paper mode: %d updates of one key took %d ns, want about two round trips", writers, paper)
	}
	if strict < 50*paper {
		t.Errorf("strict mode: %d updates of one key took %d ns against %d in paper mode, want them serialised", writers, strict, paper)
	}
}
