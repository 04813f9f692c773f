package sherman

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// TestStaleCache: compute node A caches the tree, node B's inserts split
// leaves, internal nodes and the root under it, and A's searches, writes
// and scans stay correct; A's stale copies are found by their fences and
// refreshed, after which a search is one READ again.
func TestStaleCache(t *testing.T) {
	for _, v := range consistencyNames {
		t.Run(v, func(t *testing.T) {
			f := newFabric(t, "sim", cluster(2, 1, transport.ModePaper))
			x := build(t, f, map[string]string{"consistency": v, "node_bytes": "256", "bulk_fill": "1"}, 1<<20, nil)
			m := newModel()
			for k, v := range loadSeq(1000, 20) {
				m.set(k, v)
			}
			if err := x.BulkLoad(f.Setup(2), loadSeq(1000, 20)); err != nil {
				t.Fatal(err)
			}
			a, b := transport.NodeID(2), transport.NodeID(3)
			searchAll := func(ep transport.Endpoint) error {
				c := x.NewClient(ep)
				for _, k := range m.sorted() {
					got, ok, err := c.Search([]byte(k))
					if err != nil || !ok || !bytes.Equal(got, m.vals[k]) {
						return fmt.Errorf("search %x = %x, %v, %v; want %x", k, got, ok, err, m.vals[k])
					}
				}
				return nil
			}
			run := func(n transport.NodeID, body func(transport.Endpoint) error) transport.Counters {
				f.ResetStats()
				f.Go(n, 0, func(ep transport.Endpoint) {
					if err := body(ep); err != nil {
						t.Error(err)
					}
				})
				if err := f.Run(); err != nil {
					t.Fatal(err)
				}
				st := f.Stats()
				return st.Verbs.Total()
			}
			run(a, searchAll) // A's cache now holds every internal node
			levelBefore := x.rootLevel(t)
			run(b, func(ep transport.Endpoint) error {
				c := x.NewClient(ep)
				rng := rand.New(rand.NewPCG(3, 4))
				for range 6000 {
					k := rng.Uint64N(20000)
					if k%20 == 0 {
						continue
					}
					if err := c.Insert(key(k), val(k)); err != nil {
						return err
					}
					m.set(key(k), val(k))
				}
				return nil
			})
			if x.rootLevel(t) <= levelBefore {
				t.Fatalf("B's inserts left the root at level %d: no root split to go stale", levelBefore)
			}
			stale := run(a, func(ep transport.Endpoint) error {
				if err := searchAll(ep); err != nil {
					return err
				}
				return randomOps(x.NewClient(ep), m, rand.New(rand.NewPCG(5, 6)), 2000/scale, 20000)
			})
			warm := run(a, searchAll)
			if warm[transport.VerbRead].Count != uint64(m.len())*x.readsPerSearch() {
				t.Errorf("after refreshing, %d searches took %d READs, want %d each", m.len(), warm[transport.VerbRead].Count, x.readsPerSearch())
			}
			t.Logf("stale pass: %d READs; warm pass: %d READs for %d searches", stale[transport.VerbRead].Count, warm[transport.VerbRead].Count, m.len())
		})
	}
}

func (x *Index) rootLevel(t *testing.T) int {
	var w [8]byte
	if err := x.tree.SetupEP.Read(w[:], x.tree.RootPtr); err != nil {
		t.Fatal(err)
	}
	_, lvl := inner.DecodeRoot(lockWord(w[:]))
	return lvl
}

// readsPerSearch is the READs of a search on a warm cache.
func (x *Index) readsPerSearch() uint64 {
	if x.consistency == optlock {
		return 3
	}
	return 1
}
