package dex

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

const (
	R   = transport.VerbRead
	W   = transport.VerbWrite
	C   = transport.VerbCAS
	RPC = transport.VerbRPC
)

// verbs is an expected verb count: kind -> {count, bytes out, bytes in}.
type verbs map[transport.VerbKind][3]uint64

func (v verbs) counters() transport.Counters {
	var c transport.Counters
	for k, x := range v {
		c[k] = transport.VerbCount{Count: x[0], BytesOut: x[1], BytesIn: x[2]}
	}
	return c
}

func key(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }
func val(i uint64) []byte { return binary.LittleEndian.AppendUint64(nil, i) }

// loadSeq yields keys step, 2*step, ... (n of them) with values key+1.
func loadSeq(n, step uint64) iter.Seq2[[]byte, []byte] {
	return indextest.Pairs(n, func(i uint64) []byte { return key((i + 1) * step) },
		func(i uint64) []byte { return val((i+1)*step + 1) })
}

// The golden tree: keys 2, 4, ..., 12000 on two compute nodes split at
// key 6000 (node ids 2 and 3; memory nodes 0 and 1). Bulk-loaded leaves
// hold 46 entries (92 keys of range) and inner nodes 46 children, so the
// root (level 2) has three level-1 children: the first, [0, 4234), is
// owned by compute node 2; the second, [4234, 8466), crosses the
// partition boundary and is shared; leaves never cross it. With M = 3
// every node lives on memory node 0.
const (
	goldenKeys  = 6000
	goldenBound = 6000
)

func goldenCluster() transport.Config {
	return transport.Config{
		ComputeNodes: 2, MemoryNodes: 2, Threads: 1,
		MemoryCores: 2, ComputeCores: 1, MemoryBytes: 256 << 20,
		Mode: transport.ModePaper, Seed: 7,
	}
}

// newGolden builds DEX with raw parameters on a ConnectX-5 sim (the DEX
// testbed) and bulk-loads the golden tree.
func newGolden(t *testing.T, raw map[string]string) (transport.Fabric, *Index) {
	t.Helper()
	f := indextest.SimFabric(t, goldenCluster(), sim.CX5)
	env := indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 1 << 20,
		Partitions: [][]byte{key(0), key(goldenBound)}}
	x := indextest.Build(t, "dex", env, raw).(*Index)
	if err := x.BulkLoad(f.Setup(2), loadSeq(goldenKeys, 2)); err != nil {
		t.Fatal(err)
	}
	return f, x
}

// goldenStep is one tagged operation and the verbs it must issue.
type goldenStep struct {
	name string
	op   func(c *client) error
	want verbs
}

func search(k uint64, found bool) func(c *client) error {
	return func(c *client) error {
		v, ok, err := c.Search(key(k))
		if err == nil && (ok != found || ok && binary.LittleEndian.Uint64(v) != k+1) {
			err = fmt.Errorf("search(%d) = %x, %v", k, v, ok)
		}
		return err
	}
}

// insertRange inserts the odd keys from..to.
func insertRange(from, to uint64) func(c *client) error {
	return func(c *client) error {
		for k := from; k <= to; k += 2 {
			if err := c.Insert(key(k), val(k+1)); err != nil {
				return err
			}
		}
		return nil
	}
}

// cool moves the cached leaf holding k to the cooling state, as a
// sampling thread does (section 5.2).
func cool(k uint64) func(c *client) error {
	return func(c *client) error {
		e, ok := c.cn.mt.get(c.ep, c.x.leafAddr(c, key(k)))
		if !ok || e.f == nil {
			return fmt.Errorf("leaf of %d is not cached", k)
		}
		if err := c.coolFrame(e.f); err != nil {
			return err
		}
		if e.f.state.Load() != stateCooling {
			return fmt.Errorf("leaf of %d did not cool", k)
		}
		return nil
	}
}

// evict evicts the cooling leaf holding k.
func evict(k uint64) func(c *client) error {
	return func(c *client) error {
		e, ok := c.cn.mt.get(c.ep, c.x.leafAddr(c, key(k)))
		if !ok || e.f == nil || e.f.state.Load() != stateCooling {
			return fmt.Errorf("leaf of %d is not cooling", k)
		}
		if err := c.evict(coolingSlot{f: e.f, gen: e.f.gen.Load()}); err != nil {
			return err
		}
		if _, ok := c.cn.mt.get(c.ep, c.x.leafAddr(c, key(k))); ok {
			return fmt.Errorf("leaf of %d still mapped after eviction", k)
		}
		return nil
	}
}

// leafAddr is the address of the leaf covering k, found in the cached
// level-1 node above it (test helper: no verbs).
func (x *Index) leafAddr(c *client, k []byte) transport.GAddr {
	f := c.cn.root.Load()
	for f != nil && f.data.level() > 1 {
		p := x.l.child(f.data, x.l.innerFind(f.data, k))
		if p&swizzled == 0 {
			return 0
		}
		f = c.cn.frames[p&^swizzled]
	}
	if f == nil {
		return 0
	}
	p := x.l.child(f.data, x.l.innerFind(f.data, k))
	if p&swizzled != 0 {
		return transport.GAddr(c.cn.frames[p&^swizzled].addr.Load())
	}
	return transport.GAddr(p)
}

// Node image sizes: a whole node, a body without its lock word (owned
// write-back), a lock word.
const (
	nb   = NodeBytes
	body = NodeBytes - 8
	lw   = 8
)

// golden are the verbs of each operation with a warm cache on compute
// node 2, by variant. The warm-up searches key 100 (caching the root, the
// owned level-1 node and, admission permitting, its leaf).
var golden = map[string]struct {
	params map[string]string
	steps  []goldenStep
}{
	// The cache alone: every miss is fetched.
	"cache": {
		params: map[string]string{"offload": "off", "admission": "eager"},
		steps: []goldenStep{
			{"search-hit", search(100, true), verbs{}},
			{"search-absent-hit", search(101, false), verbs{}},
			{"search-leaf-miss", search(1000, true), verbs{R: {1, 0, nb}}},
			{"update-hit", func(c *client) error { return c.Update(key(100), val(101)) }, verbs{}},
			{"insert-hit", func(c *client) error { return c.Insert(key(101), val(102)) }, verbs{}},
			// The leaf [94, 186) now holds 47 entries: 11 more fill it, and
			// the next splits it under its owned parent in the cache. The
			// allocator's chunk on memory node 0 was handed out at bulk load.
			{"insert-fill", insertRange(103, 123), verbs{}},
			{"insert-split", func(c *client) error {
				before := c.x.leafAddr(c, key(100))
				if err := insertRange(125, 125)(c); err != nil {
					return err
				}
				if c.x.leafAddr(c, key(100)) != before || c.x.leafAddr(c, key(180)) == before {
					return fmt.Errorf("the leaf of 100 did not split")
				}
				return nil
			}, verbs{}},
			{"shared-inner-miss", search(5000, true), verbs{R: {4, 0, lw + nb + lw + nb}}},
			{"shared-inner-hit", search(5002, true), verbs{}},
			{"cool-dirty", cool(100), verbs{W: {1, body, 0}}},
			{"search-cooling", search(100, true), verbs{}},
			{"cool-clean", cool(100), verbs{}},
			{"evict-clean", evict(100), verbs{}},
			{"search-evicted", search(100, true), verbs{R: {1, 0, nb}}},
			{"delete-hit", func(c *client) error { return c.Delete(key(102)) }, verbs{}},
		},
	},
	// Lazy admission with P_A = 0: no leaf is ever admitted.
	"lazy": {
		params: map[string]string{"offload": "off", "admission": "lazy", "leafadmission": "0"},
		steps: []goldenStep{
			{"search-leaf-miss", search(100, true), verbs{R: {1, 0, nb}}},
			{"search-leaf-miss-again", search(100, true), verbs{R: {1, 0, nb}}},
			{"update-not-admitted", func(c *client) error { return c.Update(key(100), val(101)) }, verbs{R: {1, 0, nb}, W: {1, body, 0}}},
		},
	},
	// Offloading every miss below an owned cached node: the request is
	// op, level, node address and key (+ value); the reply status, found,
	// changed leaf address (+ value).
	"offload": {
		params: map[string]string{"offload": "always", "admission": "eager"},
		steps: []goldenStep{
			{"search-offloaded", search(1000, true), verbs{RPC: {1, 2 + 8 + 8, 2 + 8 + 8}}},
			{"update-offloaded", func(c *client) error { return c.Update(key(1000), val(1001)) }, verbs{RPC: {1, 2 + 8 + 8 + 8, 2 + 8}}},
			// An offloaded leaf is never admitted: the warm-up's leaf is
			// offloaded again.
			{"search-again", search(100, true), verbs{RPC: {1, 2 + 8 + 8, 2 + 8 + 8}}},
			// Below a shared node nothing is offloaded (section 6.2).
			{"shared-inner-miss", search(5000, true), verbs{R: {4, 0, lw + nb + lw + nb}}},
		},
	},
	// Section 8.3's baseline RDMA B+-tree: no cache, every node shared.
	// Every level costs the optimistic lock's three READs; a write locks
	// its leaf (READ lock word, CAS), reads it, and writes body and lock
	// word in one doorbell batch. Compute node 2 serves key 8000 itself.
	"baseline": {
		params: map[string]string{"partitioning": "false", "cache": "false", "offload": "off"},
		steps: []goldenStep{
			{"search", search(100, true), verbs{R: {9, 0, 3 * shared}}},
			{"search-absent", search(101, false), verbs{R: {9, 0, 3 * shared}}},
			{"search-other-partition", search(8000, true), verbs{R: {9, 0, 3 * shared}}},
			{"update", func(c *client) error { return c.Update(key(100), val(101)) }, lockedWrite(2)},
			{"insert", func(c *client) error { return c.Insert(key(101), val(102)) }, lockedWrite(2)},
			{"insert-fill", insertRange(103, 123), lockedWrite(2).times(11)},
			// The leaf is full: it is released, then two lock-coupled walks
			// from the root (each: root pointer, root locked and read, root
			// pointer again, level-1 node locked and read, root released,
			// leaf locked and read) split it and find nothing more to
			// split, and the insert restarts.
			{"insert-split", insertRange(125, 125), verbs{
				R: {6 + 2 + 8 + 8 + 6 + 2, 0, 2*shared + lw + nb + 2*walk + 2*shared + lw + nb},
				C: {8, 8 * cas[0], 8 * cas[1]},
				W: {12, lw + (lw + nb + body + lw + body + lw) + 3*lw + body + lw, 0},
			}},
			{"delete", func(c *client) error { return c.Delete(key(102)) }, lockedWrite(2)},
		},
	},
	// Logical partitioning without the cache: the shared root costs three
	// READs, every owned node one; owned nodes are written back under a
	// local latch, with no RDMA atomic.
	"partitioning": {
		params: map[string]string{"partitioning": "true", "cache": "false", "offload": "off"},
		steps: []goldenStep{
			{"search", search(100, true), verbs{R: {5, 0, shared + 2*nb}}},
			{"search-absent", search(101, false), verbs{R: {5, 0, shared + 2*nb}}},
			{"search-shared-inner", search(5000, true), verbs{R: {7, 0, 2*shared + nb}}},
			{"update", func(c *client) error { return c.Update(key(100), val(101)) }, verbs{R: {5, 0, shared + 2*nb}, W: {1, body, 0}}},
			{"insert", func(c *client) error { return c.Insert(key(101), val(102)) }, verbs{R: {5, 0, shared + 2*nb}, W: {1, body, 0}}},
			{"insert-fill", insertRange(103, 123), verbs{R: {55, 0, 11 * (shared + 2*nb)}, W: {11, 11 * body, 0}}},
			// Two walks: only the shared root is RDMA-locked; the owned
			// level-1 node and leaf are latched and read with one READ.
			{"insert-split", insertRange(125, 125), verbs{
				R: {5 + 6 + 6 + 5, 0, shared + 2*nb + 2*(8+lw+nb+8+2*nb) + shared + 2*nb},
				C: {2, 2 * cas[0], 2 * cas[1]},
				W: {6, lw + nb + 2*body + lw + body, 0},
			}},
			{"delete", func(c *client) error { return c.Delete(key(102)) }, verbs{R: {5, 0, shared + 2*nb}, W: {1, body, 0}}},
		},
	},
}

// Bytes of the no-cache variants: a shared node's optimistic read (lock
// word, node, lock word), one lock-coupled split walk of the baseline
// (root pointer, lock word, root, root pointer, then the level-1 node and
// the leaf each with lock word and node), and a CAS out and in as the
// simulator counts them (the 8-byte operand, the 8-byte old value).
const (
	shared = lw + nb + lw
	walk   = 8 + lw + nb + 8 + 2*(lw+nb)
)

var cas = [2]uint64{8, 8}

// lockedWrite is a baseline write to a leaf below `above` shared levels:
// their optimistic reads, then READ lock word, CAS, READ leaf, WRITE body
// and lock word.
func lockedWrite(above uint64) verbs {
	return verbs{
		R: {3*above + 2, 0, above*shared + lw + nb},
		C: {1, cas[0], cas[1]},
		W: {2, body + lw, 0},
	}
}

// times is n repetitions of v.
func (v verbs) times(n uint64) verbs {
	out := verbs{}
	for k, x := range v {
		out[k] = [3]uint64{x[0] * n, x[1] * n, x[2] * n}
	}
	return out
}

// TestVerbsPerOperation is the golden verb count of every operation with a
// warm cache on the simulator, the table of doc.go: a hit costs nothing, an
// owned leaf miss one READ of the node, an offloaded operation one RPC and
// no READ, a shared node the optimistic lock's three READs (Algorithm 1
// lines 1-10), a write to a cached leaf nothing until the page cools; and
// without the cache (section 8.3's ablation), three READs per shared level
// and one per owned level on every operation, RDMA locks on shared nodes
// only. There the warm-up only reads the root pointer.
func TestVerbsPerOperation(t *testing.T) {
	for _, name := range []string{"cache", "lazy", "offload", "baseline", "partitioning"} {
		t.Run(name, func(t *testing.T) {
			g := golden[name]
			f, x := newGolden(t, g.params)
			f.Go(2, 0, func(ep transport.Endpoint) {
				if err := search(100, true)(x.newClient(ep)); err != nil {
					t.Error(err)
				}
			})
			if err := f.Run(); err != nil {
				t.Fatal(err)
			}
			f.ResetStats()
			ops := make([]indextest.Op[*client], len(g.steps))
			for i, s := range g.steps {
				ops[i] = indextest.Op[*client]{Name: s.name, Do: s.op}
			}
			var total transport.Counters
			for i, got := range indextest.VerbsPerOp(t, f, 2, x.newClient, nil, ops) {
				s := g.steps[i]
				total.Add(&got)
				if want := s.want.counters(); got != want {
					t.Errorf("%s: verbs\n got %v\nwant %v", s.name, got, want)
				}
			}
			st := f.Stats()
			// Every verb goes to memory node 0, which holds the whole tree
			// (M = 3).
			for n, got := range st.Verbs.ByNode {
				want := transport.Counters{}
				if n == 0 {
					want = total
				}
				if got != want {
					t.Errorf("verbs to node %d:\n got %v\nwant %v", n, got, want)
				}
			}
		})
	}
}

// The cache keeps owned leaves dirty without RDMA locks, so it needs
// partitioning: the combination section 8.3 never runs is refused.
func TestCacheNeedsPartitioning(t *testing.T) {
	f := indextest.SimFabric(t, goldenCluster(), sim.CX5)
	spec, err := indexes.Lookup("dex")
	if err != nil {
		t.Fatal(err)
	}
	env := indexes.Env{Fabric: f, KeySize: 8, ValueSize: 8, CacheBytes: 1 << 20}
	if _, err := spec.Build(env, map[string]string{"partitioning": "false"}); err == nil {
		t.Fatal("partitioning=false with the cache was accepted")
	}
}
