package chime

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// Hopscotch placement keeps every key within its home's neighbourhood and
// displaces entries when the nearest empty slot lies beyond it.
func TestHopscotchDisplacement(t *testing.T) {
	g, err := newGeometry(8, 8, 32, 4)
	if err != nil {
		t.Fatal(err)
	}
	w := g.emptyLeaf(0)
	displaced := 0
	for i := uint64(0); ; i++ {
		k := binary.BigEndian.AppendUint64(nil, i)
		_, hops, ok := w.place(g.home(k), g.home)
		if !ok {
			break
		}
		displaced += len(hops)
		w.insert(k, k, g.home(k), g.home)
	}
	if displaced == 0 {
		t.Errorf("no displacement while filling a leaf of span %d, neighbourhood %d", g.span, g.nbr)
	}
	n := 0
	for s, e := range w.slots {
		if !e.occupied() {
			continue
		}
		n++
		if d := g.dist(g.home(e.key), s); d >= g.nbr {
			t.Errorf("key %x in slot %d, %d past its home", e.key, s, d)
		}
	}
	t.Logf("filled %d of %d slots with %d displacements", n, g.span, displaced)
}

// Random inserts, updates and deletes against a sorted map on a small
// leaf span and neighbourhood, so that displacements, leaf splits and
// internal splits (root growth included) all happen.
func TestAgainstSortedMap(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 2, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 64 << 20}
	f, err := sim.New(cfg, sim.CX6)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x := build(t, f, map[string]string{"span": "16", "neighbourhood": "4", "innerspan": "4"})
	if err := x.BulkLoad(f.Setup(2), load(200)); err != nil {
		t.Fatal(err)
	}
	model := map[string]string{}
	for i := range uint64(200) {
		model[string(key(i))] = string(key(i))
	}
	f.Go(2, 0, func(ep transport.Endpoint) {
		c := x.NewClient(ep)
		rng := ep.Rand()
		for op := range 6000 {
			k := key(rng.Uint64N(3000))
			v := binary.BigEndian.AppendUint64(nil, uint64(op))
			_, had := model[string(k)]
			var err error
			switch r := rng.IntN(10); {
			case r < 6:
				err = c.Insert(k, v)
				model[string(k)] = string(v)
			case r < 8:
				err = c.Update(k, v)
				if had {
					model[string(k)] = string(v)
				} else if err == indexes.ErrNotFound {
					err = nil
				}
			default:
				err = c.Delete(k)
				delete(model, string(k))
				if !had && err == indexes.ErrNotFound {
					err = nil
				}
			}
			if err != nil {
				t.Errorf("op %d on %x: %v", op, k, err)
				return
			}
			got, ok, err := c.Search(k)
			want, in := model[string(k)]
			if err != nil || ok != in || ok && string(got) != want {
				t.Errorf("op %d: search %x = %x, %v, %v; want %x, %v", op, k, got, ok, err, want, in)
				return
			}
		}
		keys := make([]string, 0, len(model))
		for k := range model {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var scanned []string
		err := c.Scan(make([]byte, 8), len(keys)+10, func(k, v []byte) bool {
			if model[string(k)] != string(v) {
				t.Errorf("scan: %x = %x, want %x", k, v, model[string(k)])
			}
			scanned = append(scanned, string(k))
			return true
		})
		if err != nil || fmt.Sprint(scanned) != fmt.Sprint(keys) {
			t.Errorf("scan: %d keys, err %v; want the model's %d in order", len(scanned), err, len(keys))
		}
		from := key(1500)
		i := sort.SearchStrings(keys, string(from))
		n := 0
		err = c.Scan(from, 50, func(k, v []byte) bool {
			if !bytes.Equal(k, []byte(keys[i+n])) {
				t.Errorf("scan from %x: entry %d is %x, want %x", from, n, k, keys[i+n])
			}
			n++
			return true
		})
		if err != nil || n != min(50, len(keys)-i) {
			t.Errorf("scan from %x: %d entries, err %v", from, n, err)
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	root, err := x.NewClient(f.Setup(2)).(*client).root(true)
	if err != nil {
		t.Fatal(err)
	}
	if root.level < 3 {
		t.Errorf("root at level %d: internal splits did not grow the tree", root.level)
	}
	t.Logf("%d leaves, %d internal nodes, root level %d", x.leaves.Load(), x.inners.Load(), root.level)
}
