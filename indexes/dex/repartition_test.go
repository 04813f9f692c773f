package dex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/local"
	"github.com/dmbench/dmbench/transport/sim"
)

// The repartitioning scenario of Figure 10, scaled down: compute nodes 0,
// 1 and 2 own [0, width), [width, 2 width) and [2 width, +inf), compute
// node 3 is a spare. Bulk-loaded keys are the even keys below 3 width.
const (
	rpWidth   = 40000
	rpThreads = 2
	rpWriters = 4 * rpThreads // writer w writes the keys k with k/2 % rpWriters == w
	rpSplit   = rpWidth + rpWidth/2
	// tagRepartition marks the repartitioning thread's verbs.
	tagRepartition = transport.Tag(5)
)

func rpCluster(seed uint64) transport.Config {
	return transport.Config{
		ComputeNodes: 4, MemoryNodes: 2, Threads: rpThreads,
		MemoryCores: 2, ComputeCores: 1, MemoryBytes: 256 << 20,
		Mode: transport.ModePaper, Seed: seed,
	}
}

// newRepartitioned builds DEX on f with the scenario's partitions and
// bulk-loads it. It returns each compute node's instance: one for all, or
// with split one each, as compute nodes in processes of their own have,
// the first compute node's built and loaded, the others attached to it
// after the load.
func newRepartitioned(t *testing.T, f transport.Fabric, raw map[string]string, split bool) []*Index {
	t.Helper()
	comps := f.Config().ComputeNodeIDs()
	env := indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 1 << 20,
		Partitions: [][]byte{key(0), key(rpWidth), key(2 * rpWidth)}}
	if split {
		env.Compute = comps[:1]
		if won, err := indexes.Claim(f.Setup(comps[0]), f); err != nil || !won {
			t.Fatalf("claiming the superblock: won %v, error %v", won, err)
		}
	}
	x := indextest.Build(t, "dex", env, raw).(*Index)
	if err := x.BulkLoad(f.Setup(comps[0]), loadSeq(3*rpWidth/2-1, 2)); err != nil {
		t.Fatal(err)
	}
	xs := []*Index{x, x, x, x}
	if split {
		if err := indexes.Publish(f.Setup(comps[0]), f); err != nil {
			t.Fatal(err)
		}
		env.Attach = true
		for n := 1; n < len(comps); n++ {
			env.Compute = comps[n : n+1]
			xs[n] = indextest.Build(t, "dex", env, raw).(*Index)
		}
	}
	return xs
}

// rpModel is what writers acknowledged: key -> value, nil when deleted.
// Writers own disjoint keys, so each writer's last acknowledged write is
// the key's state.
type rpModel struct {
	mu sync.Mutex
	m  map[uint64][]byte
}

// writer runs ops random writes of writer w on keys of the range rng
// returns before every operation.
func (m *rpModel) writer(t *testing.T, c indexes.Client, ep transport.Endpoint, w uint64, ops int, rng func() (uint64, uint64)) {
	for i := range ops {
		lo, hi := rng()
		r := ep.Rand()
		// Skewed: most writes go to the first sixteenth of the range.
		if r.IntN(10) < 7 {
			hi = lo + (hi-lo)/16
		}
		k := lo/2 + r.Uint64N((hi-lo)/2)
		k = (k-k%rpWriters+w)*2 + r.Uint64N(2)
		if k < lo || k >= hi {
			continue
		}
		v := val(k<<20 | uint64(i))
		m.mu.Lock()
		_, present := m.want(k)
		m.mu.Unlock()
		var err error
		switch n := r.IntN(10); {
		case n < 6:
			err = c.Insert(key(k), v)
		case n < 9:
			err = c.Update(key(k), v)
			if !present && errors.Is(err, indexes.ErrNotFound) {
				continue
			}
		default:
			err = c.Delete(key(k))
			v = nil
			if !present && errors.Is(err, indexes.ErrNotFound) {
				continue
			}
		}
		if err != nil {
			t.Errorf("writer %d: key %d: %v", w, k, err)
			return
		}
		m.mu.Lock()
		m.m[k] = v
		m.mu.Unlock()
	}
}

// want is the expected value of k.
func (m *rpModel) want(k uint64) ([]byte, bool) {
	if v, ok := m.m[k]; ok {
		return v, v != nil
	}
	if k%2 == 0 && k > 0 && k < 3*rpWidth {
		return val(k + 1), true
	}
	return nil, false
}

// runRepartition runs the scenario on f: writers on the three owners,
// node 1's upper half moved to the spare mid-run while they write, then
// the spare's writers on the moved range and node 1's on what it kept,
// and the upper half of that moved on to node 2 while they write. It
// checks every acknowledged write from every compute node, that the flush
// wrote when dirty pages are sure to be there (eager admission, no
// offloading), and that the spare serves the moved range without
// forwarding. With split every compute node has an instance of its own
// (newRepartitioned): compute node 0's learns both moves from memory.
func runRepartition(t *testing.T, f transport.Fabric, raw map[string]string, dirty, split bool) {
	xs := newRepartitioned(t, f, raw, split)
	comps := f.Config().ComputeNodeIDs()
	m := &rpModel{m: map[uint64][]byte{}}
	var done atomic.Bool
	var bound, bound2 atomic.Uint64
	const ops = 300
	wait := func(ep transport.Endpoint) {
		for !done.Load() {
			ep.Compute(20_000)
			runtime.Gosched()
		}
	}
	for n := range 4 {
		for th := range rpThreads {
			w := uint64(n*rpThreads + th)
			x := xs[n]
			f.Go(comps[n], th, func(ep transport.Endpoint) {
				c := x.NewClient(ep)
				switch {
				case n == 3 && th == 0:
					// The spare gives the upper half of what it got to
					// compute node 2, whose range it adjoins and whose cache
					// is warm.
					wait(ep)
					b := bound.Load()
					m.writer(t, c, ep, w, ops/2, func() (uint64, uint64) { return b, 2 * rpWidth })
					ep.SetTag(tagRepartition + 1)
					b2, err := x.Repartition(ep, 3, 2, key(b+(2*rpWidth-b)/2))
					ep.SetTag(0)
					if err != nil {
						t.Error(err)
						return
					}
					bound2.Store(binary.BigEndian.Uint64(b2))
					m.writer(t, c, ep, w, ops/2, func() (uint64, uint64) { return b, bound2.Load() })
				case n == 3:
					wait(ep)
					m.writer(t, c, ep, w, ops, func() (uint64, uint64) { return bound.Load(), 2 * rpWidth })
				case n == 1 && th == 0:
					m.writer(t, c, ep, w, ops/2, func() (uint64, uint64) { return rpWidth, 2 * rpWidth })
					ep.SetTag(tagRepartition)
					b, err := x.Repartition(ep, 1, 3, key(rpSplit))
					ep.SetTag(0)
					if err != nil {
						t.Error(err)
						return
					}
					bound.Store(binary.BigEndian.Uint64(b))
					done.Store(true)
					m.writer(t, c, ep, w, ops/2, func() (uint64, uint64) { return rpWidth, bound.Load() })
				case n == 1:
					// A client still routed by the old partitions: its
					// operations on the upper half wait during the move and
					// are forwarded to the spare after it.
					m.writer(t, c, ep, w, ops, func() (uint64, uint64) { return rpWidth, 2 * rpWidth })
				default:
					lo := uint64(n) * rpWidth
					m.writer(t, c, ep, w, ops, func() (uint64, uint64) { return lo, lo + rpWidth })
				}
			})
		}
	}
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		return
	}
	b := bound.Load()
	if b < rpSplit || b >= 2*rpWidth {
		t.Fatalf("bound %d is outside [%d, %d)", b, rpSplit, 2*rpWidth)
	}
	st := f.Stats()
	rp := st.Verbs.ByTag[tagRepartition]
	t.Logf("bound %d, repartitioning verbs: %v; all: %v", bound.Load(), rp, st.Verbs.Total())
	if dirty && rp[W].Count == 0 {
		t.Errorf("the repartitioning flushed no dirty page: %v", rp)
	}
	for i, rp := range st.Verbs.ByTag[tagRepartition : tagRepartition+2] {
		if rp[RPC].Count != 1 {
			t.Errorf("repartitioning %d made %d RPCs, want 1 (the hand-over): %v", i, rp[RPC].Count, rp)
		}
	}
	b2 := bound2.Load()
	if b2 <= b || b2 >= 2*rpWidth {
		t.Fatalf("second bound %d is outside (%d, %d)", b2, b, 2*rpWidth)
	}
	// The compute nodes of the second move know its partitions.
	for _, n := range []int{2, 3} {
		parts := xs[n].parts.Load()
		for _, c := range []struct {
			k     uint64
			owner int
		}{{rpWidth, 1}, {b - 1, 1}, {b, 3}, {b2 - 1, 3}, {b2, 2}, {2 * rpWidth, 2}} {
			if o := parts.owner(key(c.k)); o != c.owner {
				t.Errorf("compute node %d: key %d is owned by compute node %d, want %d", n, c.k, o, c.owner)
			}
		}
	}
	var keys []uint64
	for k := range m.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	// Every acknowledged write, from every compute node; the spare also
	// reads the whole moved range, without forwarding.
	f.ResetStats()
	for n := range 4 {
		f.Go(comps[n], 0, func(ep transport.Endpoint) {
			c := xs[n].NewClient(ep)
			check := func(k uint64) {
				v, ok, err := c.Search(key(k))
				want, wantOK := m.want(k)
				if err != nil || ok != wantOK || ok && !bytes.Equal(v, want) {
					t.Errorf("compute node %d: search %d = %x, %v, %v; want %x, %v", n, k, v, ok, err, want, wantOK)
				}
			}
			for _, k := range keys {
				check(k)
			}
			if n == 3 {
				for k := b; k < b2; k += 3 {
					check(k)
				}
			}
		})
	}
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	if v := xs[0].parts.Load().version; v != 2 {
		t.Errorf("compute node 0 knows partitions version %d after searching the moved ranges, want 2", v)
	}
	// The spare runs alone on what it kept: nothing is forwarded.
	f.ResetStats()
	f.Go(comps[3], 0, func(ep transport.Endpoint) {
		c := xs[3].NewClient(ep)
		for k := b; k < b2; k += 5 {
			if _, _, err := c.Search(key(k)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	st = f.Stats()
	for _, n := range comps {
		if int(n) < len(st.Verbs.ByNode) && st.Verbs.ByNode[n][RPC].Count > 0 {
			t.Errorf("the spare's searches of its new range sent %d RPCs to compute node id %d", st.Verbs.ByNode[n][RPC].Count, n)
		}
	}
	// A scan from compute node 0 over every range returns the model.
	var want [][2][]byte
	for k := uint64(0); k < 3*rpWidth+2; k++ {
		if v, ok := m.want(k); ok {
			want = append(want, [2][]byte{key(k), v})
		}
	}
	f.Go(comps[0], 0, func(ep transport.Endpoint) {
		c := xs[0].NewClient(ep)
		i := 0
		err := c.Scan(key(0), len(want)+1, func(k, v []byte) bool {
			if i >= len(want) || !bytes.Equal(k, want[i][0]) || !bytes.Equal(v, want[i][1]) {
				t.Errorf("scan entry %d is %x -> %x", i, k, v)
				return false
			}
			i++
			return true
		})
		if err != nil {
			t.Error(err)
		}
		if i != len(want) && !t.Failed() {
			t.Errorf("scan returned %d entries, want %d", i, len(want))
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
}

// TestRepartitionSim runs the scenario on the simulator twice with one
// seed: both runs pass and have the same event hash.
func TestRepartitionSim(t *testing.T) {
	var hashes [2]uint64
	for i := range hashes {
		f, err := sim.New(rpCluster(3), sim.CX5)
		if err != nil {
			t.Fatal(err)
		}
		runRepartition(t, f, map[string]string{"offload": "off", "admission": "eager"}, true, false)
		hashes[i] = f.EventHash()
		f.Close()
		if t.Failed() {
			return
		}
	}
	if hashes[0] != hashes[1] {
		t.Errorf("two runs with seed 3 have event hashes %#x and %#x", hashes[0], hashes[1])
	}
}

// TestRepartitionLowSubtrees runs the scenario with subtrees rooted at
// level 1, each on its own memory node, and offloading on every miss: the
// moved range spans several subtrees and memory nodes.
func TestRepartitionLowSubtrees(t *testing.T) {
	f := indextest.SimFabric(t, rpCluster(5), sim.CX5)
	runRepartition(t, f, map[string]string{"subtreelevel": "1", "offload": "always"}, false, false)
}

// TestRepartitionLocal runs the scenario on the local fabric, threads in
// parallel, with DEX's default parameters.
func TestRepartitionLocal(t *testing.T) {
	f, err := local.New(rpCluster(4))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	runRepartition(t, f, nil, false, false)
}

// TestRepartitionSplit runs the scenario with an instance per compute
// node on both fabrics: the moves travel through memory and the
// hand-over RPC, and the compute nodes outside a move find it when its
// giving node turns their operations away.
func TestRepartitionSplit(t *testing.T) {
	t.Run("sim", func(t *testing.T) {
		f := indextest.SimFabric(t, rpCluster(3), sim.CX5)
		runRepartition(t, f, map[string]string{"offload": "off", "admission": "eager"}, true, true)
	})
	t.Run("local", func(t *testing.T) {
		runRepartition(t, indextest.NewFabric(t, indextest.Local, rpCluster(4)), nil, false, true)
	})
}

// TestRepartitionErrors: a move the partitions cannot honour is refused
// with an error naming it, and leaves the partitions as they were.
func TestRepartitionErrors(t *testing.T) {
	f := indextest.SimFabric(t, rpCluster(5), sim.CX5)
	x := newRepartitioned(t, f, nil, false)[0]
	before := x.parts.Load()
	comps := f.Config().ComputeNodeIDs()
	cases := []struct {
		name     string
		on       int
		from, to int
		split    []byte
		want     string
	}{
		{"same node", 1, 1, 1, key(rpSplit), "to itself"},
		{"no such node", 1, 1, 4, key(rpSplit), "there are 4 compute nodes"},
		{"negative node", 1, -1, 3, key(rpSplit), "there are 4 compute nodes"},
		{"split in another range", 1, 1, 3, key(rpWidth / 2), "compute node 0's range"},
		{"split on the spare", 3, 3, 0, key(rpSplit), "compute node 1's range"},
		{"split short", 1, 1, 3, []byte{1}, "keys are 8"},
		{"wrong thread", 0, 1, 3, key(rpSplit), "runs on one of its threads"},
		{"no boundary above", 2, 2, 3, key(1 << 62), "no leaf boundary"},
	}
	for i, c := range cases {
		f.Go(comps[c.on], 0, func(ep transport.Endpoint) {
			b, err := x.Repartition(ep, c.from, c.to, c.split)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("case %d (%s): Repartition = %x, %v; want an error with %q", i, c.name, b, err, c.want)
			}
		})
		if err := f.Run(); err != nil {
			t.Fatal(err)
		}
	}
	if x.parts.Load() != before {
		t.Error("a refused repartitioning changed the partitions")
	}
}
