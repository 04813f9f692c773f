package fpbtree

import (
	"fmt"
	"slices"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
)

// freshKey returns a key number between the loaded keys of leaf (keys
// step 3, 24 a leaf) whose fingerprint matches none of the leaf's, so an
// insert of it READs no entry.
func freshKey(leaf uint64, ks int) []byte {
	var fps []byte
	for i := leaf * 24; i < leaf*24+24; i++ {
		fps = append(fps, Fingerprint(testKey(i*3, ks)))
	}
	for i := leaf*24 + 1; ; i++ {
		k := testKey(i*3+1, ks)
		if !slices.Contains(fps, Fingerprint(k)) {
			return k
		}
	}
}

// Golden verb counts with a warm cache, DMTree's setup (24-byte keys,
// 8-byte values, span 32): the FP-B+-tree sequences of DMTree sections
// 2.3-2.4 and Figure 9, every verb at the memory node.
func TestVerbsPerOperation(t *testing.T) {
	const ks, vs = 24, 8
	idx, f, node := loadedTree(t, 32, 1<<20, 2400, 3)
	g := NewGeometry(ks, vs, 32, 32)
	tblRead, tblWrite, ent := uint64(g.Table-8), uint64(g.Table), uint64(g.Entry)
	type want struct {
		name  string
		do    func(c indexes.Client) error
		verbs transport.Counters
	}
	set := func(kv ...any) transport.Counters {
		var c transport.Counters
		for i := 0; i < len(kv); i += 4 {
			c[kv[i].(transport.VerbKind)] = transport.VerbCount{Count: uint64(kv[i+1].(int)), BytesOut: kv[i+2].(uint64), BytesIn: kv[i+3].(uint64)}
		}
		return c
	}
	R, W, CAS := transport.VerbRead, transport.VerbWrite, transport.VerbCAS
	cases := []want{
		{"search", func(c indexes.Client) error {
			v, ok, err := c.Search(testKey(300, ks))
			if err == nil && (!ok || string(v) != string(testVal(300, vs))) {
				err = fmt.Errorf("search = %x, %v", v, ok)
			}
			return err
		}, set(R, 2, uint64(0), tblRead+ent)},
		{"update", func(c indexes.Client) error { return c.Update(testKey(303, ks), testVal(1, vs)) },
			set(CAS, 1, uint64(8), uint64(8), R, 2, uint64(0), tblRead+ent, W, 2, ent+8, uint64(0))},
		{"insert", func(c indexes.Client) error { return c.Insert(freshKey(20, ks), testVal(2, vs)) },
			set(CAS, 1, uint64(8), uint64(8), R, 1, uint64(0), tblRead, W, 2, ent+tblWrite, uint64(0))},
		{"delete", func(c indexes.Client) error { return c.Delete(testKey(306, ks)) },
			set(CAS, 1, uint64(8), uint64(8), R, 2, uint64(0), tblRead+ent, W, 2, 8+tblWrite, uint64(0))},
		{"scan", func(c indexes.Client) error {
			n := 0
			err := c.Scan(testKey(40*24*3, ks), 10, func(_, _ []byte) bool { n++; return true })
			if err == nil && n != 10 {
				err = fmt.Errorf("scan returned %d entries, want 10", n)
			}
			return err
		}, set(R, 1, uint64(0), uint64(g.LeafSize))},
	}
	ops := make([]indextest.Op[indexes.Client], len(cases))
	for i, tc := range cases {
		ops[i] = indextest.Op[indexes.Client]{Name: tc.name, Do: tc.do}
	}
	warm := func(c indexes.Client, _ transport.Endpoint) {
		for i := range uint64(2400) {
			if _, _, err := c.Search(testKey(i*3, ks)); err != nil {
				t.Error(err)
				return
			}
		}
	}
	for i, got := range indextest.VerbsPerOp(t, f, node, idx.NewClient, warm, ops) {
		if got != cases[i].verbs {
			t.Errorf("%s: verbs %v, want %v", cases[i].name, got, cases[i].verbs)
		}
	}
	st := f.Stats()
	var mem uint64
	for _, m := range f.Config().MemoryNodeIDs() {
		mem += st.Verbs.ByNode[m].Verbs()
	}
	total := st.Verbs.Total()
	if mem != total.Verbs() {
		t.Errorf("%d of %d verbs at the memory node, want all", mem, total.Verbs())
	}
}
