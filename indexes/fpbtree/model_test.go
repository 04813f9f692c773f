package fpbtree

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

func testKey(i uint64, ks int) []byte {
	k := make([]byte, ks)
	binary.BigEndian.PutUint64(k[ks-8:], i)
	return k
}

func testVal(i uint64, vs int) []byte {
	v := make([]byte, vs)
	binary.BigEndian.PutUint64(v, i)
	return v
}

func seq(n uint64, ks, vs int, step uint64) iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		for i := range n {
			if !yield(testKey(i*step, ks), testVal(i*step, vs)) {
				return
			}
		}
	}
}

// loadedTree builds an FP-B+-tree without combining, of 24-byte keys and
// 8-byte values and the given spans and cache, on a sim fabric with one
// compute node, and bulk-loads n records step apart from that node.
func loadedTree(t testing.TB, span int, cacheBytes uint64, n, step uint64) (*Tree, transport.Fabric, transport.NodeID) {
	t.Helper()
	f := simCluster(t, 1)
	sp := fmt.Sprint(span)
	idx, err := New(indexes.Env{Fabric: f, KeySize: 24, ValueSize: 8, CacheBytes: cacheBytes},
		indexes.Params{"span": sp, "internal_span": sp, "bulk_fill": "0.75", "combine": "false"})
	if err != nil {
		t.Fatal(err)
	}
	node := f.Config().ComputeNodeIDs()[0]
	if err := idx.BulkLoad(f.Setup(node), seq(n, 24, 8, step)); err != nil {
		t.Fatal(err)
	}
	return idx.(*Tree), f, node
}

// simCluster is a sim fabric with one memory node and the given compute nodes.
func simCluster(t testing.TB, computes int) transport.Fabric {
	t.Helper()
	cfg := transport.Config{ComputeNodes: computes, MemoryNodes: 2, Threads: 2, MemoryCores: 1, ComputeCores: 1,
		MemoryBytes: 256 << 20, ComputeBytes: 16 << 20}
	f, err := sim.New(cfg, sim.CX6)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// runModel applies random operations to idx and to a sorted map and
// compares every result; it checks a full scan at the end.
func runModel(t *testing.T, f transport.Fabric, idx indexes.Index, ks, vs int, ops int, space uint64, loaded iter.Seq2[[]byte, []byte]) {
	t.Helper()
	model := map[string][]byte{}
	for k, v := range loaded {
		model[string(k)] = v
	}
	var failed error
	node := f.Config().ComputeNodeIDs()[0]
	f.Go(node, 0, func(ep transport.Endpoint) {
		c := idx.NewClient(ep)
		rng := rand.New(rand.NewPCG(1, 2))
		check := func(err error) bool {
			if err != nil && failed == nil {
				failed = err
			}
			return failed == nil
		}
		for i := range ops {
			k := indextest.Key(rng.Uint64N(space), ks)
			v := testVal(uint64(i), vs)
			switch op := rng.IntN(10); {
			case op < 4:
				if !check(c.Insert(k, v)) {
					return
				}
				model[string(k)] = v
			case op < 6:
				err := c.Update(k, v)
				_, had := model[string(k)]
				if had != (err == nil) || err != nil && !errors.Is(err, indexes.ErrNotFound) {
					check(fmt.Errorf("op %d update %x: %v, present %v", i, k, err, had))
					return
				}
				if had {
					model[string(k)] = v
				}
			case op < 8:
				err := c.Delete(k)
				_, had := model[string(k)]
				if had != (err == nil) {
					check(fmt.Errorf("op %d delete %x: %v, present %v", i, k, err, had))
					return
				}
				delete(model, string(k))
			case op < 9:
				got, ok, err := c.Search(k)
				want, had := model[string(k)]
				if err != nil || ok != had || !bytes.Equal(got, want) {
					check(fmt.Errorf("op %d search %x: %x %v %v, want %x %v", i, k, got, ok, err, want, had))
					return
				}
			default:
				n := 1 + rng.IntN(50)
				var keys []string
				for mk := range model {
					if mk >= string(k) {
						keys = append(keys, mk)
					}
				}
				sort.Strings(keys)
				keys = keys[:min(n, len(keys))]
				var got []string
				err := c.Scan(k, n, func(kk, vv []byte) bool {
					got = append(got, string(kk))
					if !bytes.Equal(vv, model[string(kk)]) {
						check(fmt.Errorf("op %d scan value of %x: %x want %x", i, kk, vv, model[string(kk)]))
					}
					return true
				})
				if !check(err) {
					return
				}
				if fmt.Sprint(got) != fmt.Sprint(keys) {
					check(fmt.Errorf("op %d scan from %x n %d: %d keys %x, want %d %x", i, k, n, len(got), got, len(keys), keys))
					return
				}
			}
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	if failed != nil {
		t.Fatal(failed)
	}
}

// The tree agrees with a sorted map through random inserts, updates,
// deletes, searches and scans that split and merge many leaves.
func TestAgainstSortedMap(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ks, vs    int
		span, isp int
		load      uint64
	}{
		{"small-empty", 8, 8, 4, 4, 0},
		{"small-loaded", 8, 8, 6, 5, 300},
		{"dmtree-shape", 24, 8, 32, 32, 2000},
		{"crc-entries", 24, 40, 8, 8, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := simCluster(t, 1)
			idx, err := NewTree(indexes.Env{Fabric: f, KeySize: tc.ks, ValueSize: tc.vs, CacheBytes: 1 << 20},
				Options{Name: "fpbtree", Span: tc.span, ISpan: tc.isp, Fill: 0.75})
			if err != nil {
				t.Fatal(err)
			}
			if err := idx.BulkLoad(f.Setup(f.Config().ComputeNodeIDs()[0]), seq(tc.load, tc.ks, tc.vs, 3)); err != nil {
				t.Fatal(err)
			}
			runModel(t, f, idx, tc.ks, tc.vs, 9000, 8192, seq(tc.load, tc.ks, tc.vs, 3))
		})
	}
}
