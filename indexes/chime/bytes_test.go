package chime

import (
	"encoding/binary"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// Golden bytes of a search with the DMTree setup (24-byte keys, 8-byte
// values, span 32, neighbourhood 8): the first search of a key READs its
// neighbourhood, 302 or 303 bytes with the cacheline version bytes; the
// hotspot buffer then knows its slot, and the next search READs that one
// 33-byte entry (34 when it opens a cacheline): CHIME's hotness-aware
// speculative read, close to the expected single-entry search.
func TestSearchBytesDMTreeSetup(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
	f, err := sim.New(cfg, sim.CX6)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x := indextest.Build(t, "chime", indexes.Env{Fabric: f, KeySize: 24, ValueSize: 8, CacheBytes: 4 << 20}, map[string]string{"span": "32"}).(*Chime)
	k24 := func(i uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 16), i*2+2) }
	if err := x.BulkLoad(f.Setup(1), indextest.Pairs(1000, k24, func(i uint64) []byte { return key(i) })); err != nil {
		t.Fatal(err)
	}
	g := &x.g
	i := uint64(100)
	for g.home(k24(i))+g.nbr > g.span {
		i++
	}
	f.Go(1, 0, func(ep transport.Endpoint) {
		if _, _, err := x.NewClient(ep).Search(k24(i + 1)); err != nil { // warms the internal cache
			t.Error(err)
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	search := func() transport.Counters {
		f.ResetStats()
		f.Go(1, 0, func(ep transport.Endpoint) {
			c := x.NewClient(ep)
			if v, ok, err := c.Search(k24(i)); err != nil || !ok || string(v) != string(key(i)) {
				t.Errorf("search = %x, %v, %v", v, ok, err)
			}
		})
		if err := f.Run(); err != nil {
			t.Fatal(err)
		}
		st := f.Stats()
		return st.Verbs.Total()
	}
	first, second := search(), search()
	rd := transport.VerbRead
	if first.Verbs() != 1 || first[rd].Count != 1 || (first[rd].BytesIn != 302 && first[rd].BytesIn != 303) {
		t.Errorf("first search: %+v; want 1 READ of 302-303 bytes (the neighbourhood)", first)
	}
	if second.Verbs() != 1 || second[rd].Count != 1 || (second[rd].BytesIn != 33 && second[rd].BytesIn != 34) {
		t.Errorf("speculative search: %+v; want 1 READ of 33-34 bytes (one entry)", second)
	}
}
