package dmtree

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/fpbtree"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

const ks, vs = 24, 8

func key(i uint64) []byte {
	k := make([]byte, ks)
	binary.BigEndian.PutUint64(k[ks-8:], i)
	return k
}

func val(i uint64) []byte { return binary.BigEndian.AppendUint64(nil, i) }

// loaded is the bulk load of the verb tests: keys 0, 3, 6, ... so that
// leaf j (24 keys at bulk_fill 0.75) holds key numbers 72j to 72j+69.
func loaded(n uint64) func(func([]byte, []byte) bool) {
	return func(yield func([]byte, []byte) bool) {
		for i := range n {
			if !yield(key(i*3), val(i*3)) {
				return
			}
		}
	}
}

// freshKey is a key number inside leaf j, not loaded, whose fingerprint
// matches none of the leaf's keys, so an insert of it READs no entry.
func freshKey(j uint64) []byte {
	var fps []byte
	for i := j * 24; i < j*24+24; i++ {
		fps = append(fps, fpbtree.Fingerprint(key(i*3)))
	}
	for i := j*24 + 1; ; i++ {
		if k := key(i*3 + 1); !slices.Contains(fps, fpbtree.Fingerprint(k)) {
			return k
		}
	}
}

// verbCase is one operation's expected verbs, split by target: the memory
// node and the compute peers.
type verbCase struct {
	name      string
	mem, peer transport.Counters
}

// counters builds Counters from (kind, count, bytes out, bytes in) quads.
func counters(q ...uint64) transport.Counters {
	var c transport.Counters
	for i := 0; i < len(q); i += 4 {
		c[q[i]] = transport.VerbCount{Count: q[i+1], BytesOut: q[i+2], BytesIn: q[i+3]}
	}
	return c
}

const (
	rd  = uint64(transport.VerbRead)
	wr  = uint64(transport.VerbWrite)
	cas = uint64(transport.VerbCAS)
)

// runVerbs builds the variant on 1 memory node and 3 compute nodes, warms
// the client's caches (internal nodes and table copies) on compute node
// 1, then runs search, a search of a key inserted by another node (the
// cached copy misses it), update, insert, delete and scan, each on its own
// leaf, choosing leaves whose primary table is remote (remote true) or on
// the client's own node. It returns the verbs of each, by target.
func runVerbs(t *testing.T, variant string, remote bool) map[string][2]transport.Counters {
	cfg := transport.Config{ComputeNodes: 3, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 256 << 20}
	f := indextest.SimFabric(t, cfg, sim.CX6)
	d := indextest.Build(t, "dmtree", indexes.Env{Fabric: f, KeySize: ks, ValueSize: vs, CacheBytes: 8 << 20}, map[string]string{"variant": variant}).(*DMTree)
	const records = 2400
	if err := d.BulkLoad(f.Setup(1), loaded(records)); err != nil {
		t.Fatal(err)
	}
	me, other := transport.NodeID(1), transport.NodeID(2)
	phase := func(n transport.NodeID, body func(c *fpbtree.Client, ep transport.Endpoint)) {
		t.Helper()
		f.Go(n, 0, func(ep transport.Endpoint) { body(d.Tree.Client(ep), ep) })
		if err := f.Run(); err != nil {
			t.Fatal(err)
		}
	}
	ops := []string{"search", "search-miss", "update", "insert", "delete", "scan"}
	leaves := map[string]uint64{}
	// Pick one leaf per operation whose primary table is (or is not) on
	// the client's node.
	phase(me, func(c *fpbtree.Client, ep transport.Endpoint) {
		next := uint64(1)
		for _, op := range ops {
			for ; next < records/24-1; next++ {
				_, fp, err := c.Locate(key(next * 72))
				if err != nil {
					t.Error(err)
					return
				}
				if p, ok := d.PrimaryNode(fp); !ok || (p != me) == remote {
					leaves[op] = next
					next++
					break
				}
			}
		}
	})
	// Warm node 1: every key once, filling its internal cache and copies.
	phase(me, func(c *fpbtree.Client, ep transport.Endpoint) {
		for i := range uint64(records) {
			if _, _, err := c.Search(key(i * 3)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	// Node 2 inserts a key node 1's cached copy of its table lacks.
	missKey := freshKey(leaves["search-miss"])
	phase(other, func(c *fpbtree.Client, ep transport.Endpoint) {
		if err := c.Insert(missKey, val(7)); err != nil {
			t.Error(err)
		}
	})
	do := map[string]func(c *fpbtree.Client) error{
		"search": func(c *fpbtree.Client) error {
			k := leaves["search"]*72 + 3
			v, ok, err := c.Search(key(k))
			if err == nil && (!ok || string(v) != string(val(k))) {
				err = fmt.Errorf("search = %x, %v", v, ok)
			}
			return err
		},
		"search-miss": func(c *fpbtree.Client) error {
			v, ok, err := c.Search(missKey)
			if err == nil && (!ok || string(v) != string(val(7))) {
				err = fmt.Errorf("search of a key inserted elsewhere = %x, %v", v, ok)
			}
			return err
		},
		"update": func(c *fpbtree.Client) error { return c.Update(key(leaves["update"]*72+6), val(1)) },
		"insert": func(c *fpbtree.Client) error { return c.Insert(freshKey(leaves["insert"]), val(2)) },
		"delete": func(c *fpbtree.Client) error { return c.Delete(key(leaves["delete"]*72 + 9)) },
		"scan": func(c *fpbtree.Client) error {
			n := 0
			err := c.Scan(key(leaves["scan"]*72), 10, func(_, _ []byte) bool { n++; return true })
			if err == nil && n != 10 {
				err = fmt.Errorf("scan returned %d entries, want 10", n)
			}
			return err
		},
	}
	got := map[string][2]transport.Counters{}
	for _, op := range ops {
		f.ResetStats()
		phase(me, func(c *fpbtree.Client, ep transport.Endpoint) {
			if err := do[op](c); err != nil {
				t.Errorf("%s: %v", op, err)
			}
		})
		st := f.Stats()
		var peers transport.Counters
		for _, n := range f.Config().ComputeNodeIDs() {
			if int(n) < len(st.Verbs.ByNode) {
				peers.Add(&st.Verbs.ByNode[n])
			}
		}
		got[op] = [2]transport.Counters{st.Verbs.ByNode[0], peers}
	}
	return got
}

// Golden verb counts, warm caches, 24-byte keys, 8-byte values, span 32:
// DMTree section 3.3 and Figure 9 for the full DMTree, and the ablation
// steps of Figure 16 on the way there. mem is what the memory node
// serves, peer what the other compute nodes serve.
func TestVerbsPerOperation(t *testing.T) {
	g := fpbtree.NewGeometry(ks, vs, 32, 32)
	tr, tw, e := uint64(g.Table-8), uint64(g.Table), uint64(g.Entry)
	run := uint64(23*g.Stride + g.Entry) // the 24 bulk-loaded slots of a leaf
	leaf := uint64(g.LeafSize)
	none := transport.Counters{}
	want := map[string]map[string][2]transport.Counters{
		"fpbtree": {
			"search":      {counters(rd, 2, 0, tr+e), none},
			"search-miss": {counters(rd, 2, 0, tr+e), none},
			"update":      {counters(cas, 1, 8, 8, rd, 2, 0, tr+e, wr, 2, e+8, 0), none},
			"insert":      {counters(cas, 1, 8, 8, rd, 1, 0, tr, wr, 2, e+tw, 0), none},
			"delete":      {counters(cas, 1, 8, 8, rd, 2, 0, tr+e, wr, 2, 8+tw, 0), none},
			"scan":        {counters(rd, 1, 0, leaf), none},
		},
		"rdmaopt": {
			"search":      {counters(rd, 2, 0, tr+e), none},
			"search-miss": {counters(rd, 2, 0, tr+e), none},
			"update":      {counters(cas, 1, 8, 8, rd, 2, 0, tr+e, wr, 2, e+8, 0), none},
			"insert":      {counters(cas, 1, 8, 8, rd, 1, 0, tr, wr, 2, e+tw, 0), none},
			"delete":      {counters(cas, 1, 8, 8, rd, 2, 0, tr+e, wr, 2, 8+tw, 0), none},
			"scan":        {counters(rd, 2, 0, tr+run), none},
		},
		"cache": {
			"search":      {counters(rd, 1, 0, e), none},
			"search-miss": {counters(rd, 1, 0, e), counters(rd, 1, 0, tr)},
			"update":      {counters(cas, 1, 8, 8, rd, 1, 0, e, wr, 2, e+8, 0), counters(rd, 1, 0, tr)},
			"insert":      {counters(cas, 1, 8, 8, wr, 2, e+8, 0), counters(rd, 1, 0, tr, wr, 1, tw-8, 0)},
			"delete":      {counters(cas, 1, 8, 8, rd, 1, 0, e, wr, 2, 8+8, 0), counters(rd, 1, 0, tr, wr, 1, tw-8, 0)},
			"scan":        {counters(rd, 1, 0, run), counters(rd, 1, 0, tr)},
		},
		"concur": {
			"search":      {counters(rd, 1, 0, e), none},
			"search-miss": {counters(rd, 1, 0, e), counters(rd, 1, 0, tr)},
			"update":      {counters(rd, 1, 0, e, wr, 1, e, 0), counters(cas, 1, 8, 8, rd, 1, 0, tr, wr, 1, 8, 0)},
			"insert":      {counters(wr, 1, e, 0), counters(cas, 1, 8, 8, rd, 1, 0, tr, wr, 1, tw, 0)},
			"delete":      {counters(rd, 1, 0, e, wr, 1, 8, 0), counters(cas, 1, 8, 8, rd, 1, 0, tr, wr, 1, tw, 0)},
			"scan":        {counters(rd, 1, 0, run), counters(rd, 1, 0, tr)},
		},
	}
	for _, variant := range []string{"fpbtree", "rdmaopt", "cache", "concur"} {
		t.Run(variant, func(t *testing.T) {
			got := runVerbs(t, variant, true)
			for op, w := range want[variant] {
				t.Logf("%-11s memory node %v | peers %v", op, got[op][0], got[op][1])
				if got[op] != w {
					t.Errorf("%s: memory node %v, peers %v; want %v, %v", op, got[op][0], got[op][1], w[0], w[1])
				}
			}
		})
	}
}

// When the primary table is on the client's own node, the table READ,
// lock CAS and table WRITE are local accesses: only the memory node's
// verbs remain (the Expected counts of Figure 3 for update and insert).
func TestVerbsLocalPrimary(t *testing.T) {
	g := fpbtree.NewGeometry(ks, vs, 32, 32)
	e := uint64(g.Entry)
	run := uint64(23*g.Stride + g.Entry)
	none := transport.Counters{}
	want := map[string][2]transport.Counters{
		"search":      {counters(rd, 1, 0, e), none},
		"search-miss": {counters(rd, 1, 0, e), none},
		"update":      {counters(rd, 1, 0, e, wr, 1, e, 0), none},
		"insert":      {counters(wr, 1, e, 0), none},
		"delete":      {counters(rd, 1, 0, e, wr, 1, 8, 0), none},
		"scan":        {counters(rd, 1, 0, run), none},
	}
	got := runVerbs(t, "concur", false)
	for op, w := range want {
		if got[op] != w {
			t.Errorf("%s: memory node %v, peers %v; want %v, %v", op, got[op][0], got[op][1], w[0], w[1])
		}
	}
}
