package rolex

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

// Golden verb counts with the model cached: the sequences doc.go lists.
func TestVerbsPerOperation(t *testing.T) {
	for _, masked := range []bool{true, false} {
		t.Run(fmt.Sprintf("maskedcas=%v", masked), func(t *testing.T) {
			cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
			f, err := sim.New(cfg, sim.CX6)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			x := indextest.Build(t, "rolex", indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 4 << 20},
				map[string]string{"span": "16", "error": "16", "maskedcas": fmt.Sprint(masked)}).(*Rolex)
			if err := x.BulkLoad(f.Setup(0), load(1000)); err != nil {
				t.Fatal(err)
			}
			g := &x.g
			lockKind := transport.VerbMaskedCAS
			if !masked {
				lockKind = transport.VerbCAS
			}
			var m *model
			span := func(k []byte) uint64 { l, r := m.leafRange(k); return uint64(r - l + 1) }
			insertSpan := func(k []byte) uint64 {
				l, r := m.leafRange(k)
				t := m.target(k)
				return uint64(max(r, t) - min(l, t) + 1)
			}
			hot, upd, del := uint64(100), uint64(300), uint64(500)
			// A fresh key (odd) between loaded keys: its leaf is full.
			fresh := binary.BigEndian.AppendUint64(nil, 700*2+3)
			type want map[transport.VerbKind][2]uint64 // count, bytes in+out
			ops := []struct {
				name string
				do   func(c indexes.Client) error
				want func() want
			}{
				{"search", func(c indexes.Client) error { return expect(c, key(hot)) },
					func() want { n := span(key(hot)); return want{transport.VerbRead: {n, n * uint64(g.wire)}} }},
				{"update", func(c indexes.Client) error { return c.Update(key(upd), key(7)) },
					func() want {
						n := span(key(upd)) + 1
						return want{transport.VerbRead: {n, n * uint64(g.wire)}, lockKind: {1, 16}, transport.VerbWrite: {2, uint64(g.wire) + 8}}
					}},
				{"delete", func(c indexes.Client) error { return c.Delete(key(del)) },
					func() want {
						n := span(key(del)) + 1
						return want{transport.VerbRead: {n, n * uint64(g.wire)}, lockKind: {1, 16}, transport.VerbWrite: {2, uint64(g.wire) + 8}}
					}},
				{"insert", func(c indexes.Client) error { return c.Insert(key(del), key(del)) },
					func() want {
						n := insertSpan(key(del)) + 1
						return want{transport.VerbRead: {n, n * uint64(g.wire)}, lockKind: {1, 16}, transport.VerbWrite: {2, uint64(g.wire) + 8}}
					}},
				{"insert with split", func(c indexes.Client) error { return c.Insert(fresh, fresh) },
					func() want {
						n := insertSpan(fresh) + 1
						return want{transport.VerbRead: {n, n * uint64(g.wire)}, lockKind: {1, 16}, transport.VerbRPC: {1, 16},
							transport.VerbWrite: {3, 2*uint64(g.wire) + 8}}
					}},
				{"search with synonym leaf", func(c indexes.Client) error { return expect(c, fresh) },
					func() want { n := span(fresh) + 1; return want{transport.VerbRead: {n, n * uint64(g.wire)}} }},
				{"scan 20", func(c indexes.Client) error {
					got := 0
					err := c.Scan(key(hot), 20, func(k, v []byte) bool { got++; return true })
					if err == nil && got != 20 {
						err = fmt.Errorf("scan returned %d entries, want 20", got)
					}
					return err
				}, func() want {
					l, _ := m.leafRange(key(hot))
					_, r := m.leafRange(addKey(key(hot), 20))
					n := uint64(r - l + 1)
					return want{transport.VerbRead: {n, n * uint64(g.wire)}}
				}},
			}
			named := make([]indextest.Op[indexes.Client], len(ops))
			for i, o := range ops {
				named[i] = indextest.Op[indexes.Client]{Name: o.name, Do: o.do}
			}
			warm := func(c indexes.Client, ep transport.Endpoint) {
				if err := expect(c, key(hot)); err != nil {
					t.Error(err)
				}
				m = x.nodes[ep.Node()].m.Load()
			}
			for i, got := range indextest.VerbsPerOp(t, f, 1, x.NewClient, warm, named) {
				w := ops[i].want()
				var total uint64
				for kind, cb := range w {
					total += cb[0]
					if vc := got[kind]; vc.Count != cb[0] || vc.BytesIn+vc.BytesOut != cb[1] {
						t.Errorf("%s: %v: got %+v, want %d verbs of %d bytes", ops[i].name, kind, vc, cb[0], cb[1])
					}
				}
				if got.Verbs() != total {
					t.Errorf("%s: %d verbs in all, want %d: %+v", ops[i].name, got.Verbs(), total, got)
				}
			}
		})
	}
}

func expect(c indexes.Client, k []byte) error {
	v, ok, err := c.Search(k)
	if err == nil && (!ok || string(v) != string(k)) {
		err = fmt.Errorf("search(%x) = %x, %v", k, v, ok)
	}
	return err
}
