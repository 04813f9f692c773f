package sherman

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// workload is a concurrent test's key space: keys below space; key k is
// owned by client k % (clients+1), and the keys of the extra class are
// "stable": bulk-loaded and never written, so every search and scan must
// see them, whatever splits go on around them. A client checks its own
// keys exactly (nobody else writes them) and the stable keys always.
type workload struct {
	clients int
	space   uint64
	lo      uint64 // keys from lo (a partition's start)
}

func (w workload) stable(k uint64) bool { return k%uint64(w.clients+1) == uint64(w.clients) }

// stableVal is the value of a stable key.
func stableVal(k uint64) []byte { return val(k ^ 0x5ab1e) }

// ownedVal encodes key and a version, so a torn or misplaced value shows.
func ownedVal(k, ver uint64) []byte { return val(k<<20 | ver&0xfffff) }

func (w workload) load() ([][]byte, [][]byte) {
	var ks, vs [][]byte
	for k := w.lo; k < w.lo+w.space; k++ {
		if w.stable(k) {
			ks, vs = append(ks, key(k)), append(vs, stableVal(k))
		}
	}
	return ks, vs
}

func bulkLoad(t testing.TB, x *Index, ep transport.Endpoint, ks, vs [][]byte) {
	t.Helper()
	err := x.BulkLoad(ep, func(yield func([]byte, []byte) bool) {
		for i := range ks {
			if !yield(ks[i], vs[i]) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// run is client id's random operations; it returns its final model.
func (w workload) run(c indexes.Client, id int, ops int, rng *rand.Rand) (*model, error) {
	m := newModel()
	n := uint64(w.clients + 1)
	own := func() uint64 { return w.lo + rng.Uint64N(w.space/n)*n + uint64(id) }
	for i := range ops {
		switch p := rng.IntN(100); {
		case p < 35:
			k := own()
			v := ownedVal(k, uint64(i))
			if err := c.Insert(key(k), v); err != nil {
				return m, fmt.Errorf("insert %d: %w", k, err)
			}
			m.set(key(k), v)
		case p < 45:
			k := own()
			v := ownedVal(k, uint64(i))
			err := c.Update(key(k), v)
			_, had := m.get(key(k))
			if had && err != nil || !had && !errors.Is(err, indexes.ErrNotFound) {
				return m, fmt.Errorf("update %d (present %v): %v", k, had, err)
			}
			if had {
				m.set(key(k), v)
			}
		case p < 55:
			k := own()
			err := c.Delete(key(k))
			_, had := m.get(key(k))
			if had && err != nil || !had && !errors.Is(err, indexes.ErrNotFound) {
				return m, fmt.Errorf("delete %d (present %v): %v", k, had, err)
			}
			m.del(key(k))
		case p < 75:
			k := own()
			got, found, err := c.Search(key(k))
			want, had := m.get(key(k))
			if err != nil || found != had || !bytes.Equal(got, want) {
				return m, fmt.Errorf("search own %d = %x, %v, %v; want %x, %v", k, got, found, err, want, had)
			}
		case p < 95:
			k := w.lo + rng.Uint64N(w.space/n)*n + uint64(w.clients)
			got, found, err := c.Search(key(k))
			if err != nil || !found || !bytes.Equal(got, stableVal(k)) {
				return m, fmt.Errorf("search stable %d = %x, %v, %v", k, got, found, err)
			}
		default:
			if err := w.checkScan(c, id, m, w.lo+rng.Uint64N(w.space), 1+rng.IntN(120)); err != nil {
				return m, err
			}
		}
	}
	return m, nil
}

// checkScan checks a scan's order, its stable keys, and client id's own
// keys against m.
func (w workload) checkScan(c indexes.Client, id int, m *model, from uint64, n int) error {
	var got []uint64
	vals := map[uint64][]byte{}
	err := c.Scan(key(from), n, func(k, v []byte) bool {
		u := binary.BigEndian.Uint64(k)
		got = append(got, u)
		vals[u] = v
		return true
	})
	if err != nil {
		return fmt.Errorf("scan %d+%d: %w", from, n, err)
	}
	if len(got) > n {
		return fmt.Errorf("scan %d+%d returned %d entries", from, n, len(got))
	}
	for i, k := range got {
		if k < from || i > 0 && k <= got[i-1] {
			return fmt.Errorf("scan %d+%d: entry %d is key %d after %v", from, n, i, k, got[:i])
		}
	}
	if len(got) == 0 {
		return nil
	}
	last := got[len(got)-1]
	if len(got) < n {
		last = w.lo + w.space // the scan ran to the end
	}
	idx := 0
	for k := from; k <= last && k < w.lo+w.space; k++ {
		for idx < len(got) && got[idx] < k {
			idx++
		}
		present := idx < len(got) && got[idx] == k
		switch {
		case w.stable(k):
			if !present || !bytes.Equal(vals[k], stableVal(k)) {
				return fmt.Errorf("scan %d+%d: stable key %d present %v value %x", from, n, k, present, vals[k])
			}
		case k%uint64(w.clients+1) == uint64(id):
			want, had := m.get(key(k))
			if present != had || had && !bytes.Equal(vals[k], want) {
				return fmt.Errorf("scan %d+%d: own key %d present %v (%x), want %v (%x)", from, n, k, present, vals[k], had, want)
			}
		}
	}
	return nil
}

// concurrent runs clients on every thread of every compute node of f
// (coroutines of them per thread), checks each, then checks a full scan
// against the union of their models and the stable keys.
func concurrent(t *testing.T, f transport.Fabric, x *Index, coroutines, ops int, parts [][]byte) {
	cfg := f.Config()
	clients := cfg.ComputeNodes * cfg.Threads * coroutines
	perNode := cfg.Threads * coroutines
	space := uint64(6000)
	spaceOf := func(cn int) workload {
		if parts == nil {
			return workload{clients: clients, space: space}
		}
		return workload{clients: perNode, space: space, lo: uint64(cn) * space}
	}
	ep := f.Setup(cfg.ComputeNodeIDs()[0])
	var ks, vs [][]byte
	for cn := range cfg.ComputeNodes {
		if parts != nil || cn == 0 {
			k, v := spaceOf(cn).load()
			ks, vs = append(ks, k...), append(vs, v...)
		}
	}
	bulkLoad(t, x, ep, ks, vs)
	var mu sync.Mutex
	all := newModel()
	for i, k := range ks {
		all.set(k, vs[i])
	}
	id := 0
	for cn, n := range cfg.ComputeNodeIDs() {
		for th := range cfg.Threads {
			for range coroutines {
				w, me := spaceOf(cn), id
				if parts != nil {
					me = id % perNode
				}
				seed := uint64(id)
				id++
				f.Go(n, th, func(ep transport.Endpoint) {
					m, err := w.run(x.NewClient(ep), me, ops, rand.New(rand.NewPCG(seed, 99)))
					if err != nil {
						t.Errorf("client %d on node %d: %v", me, n, err)
					}
					mu.Lock()
					for k, v := range m.vals {
						all.set([]byte(k), v)
					}
					mu.Unlock()
				})
			}
		}
	}
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	f.Go(cfg.ComputeNodeIDs()[0], 0, func(ep transport.Endpoint) {
		got, err := scanAll(x.NewClient(ep), all.len()+10)
		if err == nil {
			err = checkScan(all, key(0), all.len()+10, got)
		}
		if err != nil {
			t.Errorf("final scan: %v", err)
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentClients runs clients on three compute nodes at once on
// both fabrics and memory modes, in every variant, with small nodes so
// that leaves and internal nodes split under them.
func TestConcurrentClients(t *testing.T) {
	for _, fabric := range []string{"sim", "local"} {
		for _, mode := range []transport.Mode{transport.ModePaper, transport.ModeStrict} {
			for _, v := range consistencyNames {
				if mode == transport.ModeStrict && v == "versions" {
					continue // relies on paper mode (paperMode says why)
				}
				t.Run(fmt.Sprintf("%s/%s/%s", fabric, mode, v), func(t *testing.T) {
					f := newFabric(t, fabric, cluster(3, 2, mode))
					x := build(t, f, map[string]string{"consistency": v, "node_bytes": "256"}, 1<<20, nil)
					ops := 600 / scale
					if fabric == "local" {
						ops = 300
					}
					concurrent(t, f, x, 2, ops, nil)
				})
			}
		}
	}
}

// TestPartitionedClients is P-Sherman under concurrency: each compute
// node's clients work in its own partition, so the nodes inside it are
// synchronised by local locks alone, while nodes straddling partitions
// (the upper levels) and scans running into a neighbour's partition take
// the shared protocol.
func TestPartitionedClients(t *testing.T) {
	for _, fabric := range []string{"sim", "local"} {
		for _, mode := range []transport.Mode{transport.ModePaper, transport.ModeStrict} {
			for _, v := range consistencyNames {
				if mode == transport.ModeStrict && v != "crc" {
					continue // relies on paper mode (paperMode says why)
				}
				t.Run(fmt.Sprintf("%s/%s/%s", fabric, mode, v), func(t *testing.T) {
					f := newFabric(t, fabric, cluster(3, 2, mode))
					parts := [][]byte{key(0), key(6000), key(12000)}
					x := build(t, f, map[string]string{"consistency": v, "node_bytes": "256", "partitioned": "true"}, 1<<20, parts)
					ops := 600 / scale
					if fabric == "local" {
						ops = 300
					}
					concurrent(t, f, x, 2, ops, parts)
				})
			}
		}
	}
}

// TestDeterministic runs the same concurrent workload twice on the
// simulator: the runs must be identical event for event.
func TestDeterministic(t *testing.T) {
	hash := func() uint64 {
		f := newFabric(t, "sim", cluster(3, 2, transport.ModeStrict))
		x := build(t, f, map[string]string{"consistency": "optlock", "node_bytes": "256"}, 64<<10, nil)
		concurrent(t, f, x, 2, 300/scale, nil)
		return f.(*sim.Fabric).EventHash()
	}
	if a, b := hash(), hash(); a != b {
		t.Errorf("two runs of one seed: event hashes %x and %x", a, b)
	}
}
