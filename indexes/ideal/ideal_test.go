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

	got := map[string]transport.Counters{}
	f.Go(1, 0, func(ep transport.Endpoint) {
		c := idx.NewClient(ep)
		// Warm the allocator so the insert below costs no chunk RPC.
		if err := c.Insert(key(5000), key(1)); err != nil {
			t.Error(err)
		}
		ops := []struct {
			name string
			do   func() error
		}{
			{"search", func() error {
				v, ok, err := c.Search(key(7))
				if err == nil && (!ok || string(v) != string(key(7))) {
					err = fmt.Errorf("search(7) = %x, %v", v, ok)
				}
				return err
			}},
			{"update", func() error { return c.Update(key(7), key(9)) }},
			{"insert", func() error { return c.Insert(key(5001), key(1)) }},
			{"delete", func() error { return c.Delete(key(8)) }},
			{"scan", func() error {
				n := 0
				err := c.Scan(key(100), 100, func(k, v []byte) bool { n++; return true })
				if err == nil && n != 100 {
					err = fmt.Errorf("scan returned %d entries, want 100", n)
				}
				return err
			}},
		}
		for i, op := range ops {
			ep.SetTag(transport.Tag(i + 1))
			if err := op.do(); err != nil {
				t.Errorf("%s: %v", op.name, err)
			}
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	st := f.Stats()
	for i, name := range []string{"search", "update", "insert", "delete", "scan"} {
		got[name] = st.Verbs.ByTag[i+1]
		if got[name] != want[name] {
			t.Errorf("%s: verbs %+v, want %+v", name, got[name], want[name])
		}
	}
}
