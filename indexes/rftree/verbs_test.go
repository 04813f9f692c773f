package rftree

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
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

const (
	R = transport.VerbRead
	W = transport.VerbWrite
	C = transport.VerbCAS
)

// golden are the verbs of each operation with a warm SLC (8-byte keys and
// values, 1 KB nodes: 61 entries per data node, 45 per bulk-loaded one),
// as doc.go lists them.
var golden = []struct {
	name string
	want verbs
}{
	{"search", verbs{R: {1, 0, 1024}}},
	{"search-miss", verbs{R: {1, 0, 1024}}},
	{"update", verbs{R: {1, 0, 1024}, C: {1, 8, 8}, W: {1, 1024, 0}}},
	{"update-miss", verbs{R: {1, 0, 1024}}},
	{"insert", verbs{R: {1, 0, 1024}, C: {1, 8, 8}, W: {1, 1024, 0}}},
	{"delete", verbs{R: {1, 0, 1024}, C: {1, 8, 8}, W: {1, 1024, 0}}},
	{"scan", verbs{R: {3, 0, 3 * 1024}}},
	{"insert-split", verbs{R: {2, 0, 2 * 1024}, C: {2, 16, 16}, W: {3, 3 * 1024, 0}}},
	{"delete-merge", verbs{R: {3, 0, 3 * 1024}, C: {3, 24, 24}, W: {3, 3 * 1024, 0}}},
	{"search-stale", verbs{R: {2, 0, 2 * 1024}}},
}

// TestVerbsPerOperation is the golden verb count of every operation, by
// kind and bytes, with a warm SLC on the simulator.
func TestVerbsPerOperation(t *testing.T) {
	f := simCluster(t, 1, 1, transport.ModePaper)
	x := build(t, f, nil)
	if err := x.BulkLoad(f.Setup(2), loadSeq(1900, 2)); err != nil {
		t.Fatal(err)
	}
	// Bulk-loaded data node j holds keys 90j+2 ... 90j+90. Warm: split data
	// nodes 1 and 7 (the allocator's first chunk on each memory node),
	// fill data node 3 to 61 entries, delete 30 entries of data node 5 (15
	// left), then rebuild the SLC.
	warm := func(c indexes.Client, _ transport.Endpoint) {
		for _, from := range []uint64{93, 633} {
			for k := from; k <= from+2*16; k += 2 {
				if err := c.Insert(key(k), val(k)); err != nil {
					t.Error(err)
				}
			}
		}
		for k := uint64(273); k < 273+2*16; k += 2 {
			if err := c.Insert(key(k), val(k)); err != nil {
				t.Error(err)
			}
		}
		for k := uint64(452); k < 452+2*30; k += 2 {
			if err := c.Delete(key(k)); err != nil {
				t.Error(err)
			}
		}
		if err := refreshNow(c); err != nil {
			t.Error(err)
		}
	}
	type client = indexes.Client
	found := func(k, v uint64) func(client) error {
		return func(c client) error {
			got, ok, err := c.Search(key(k))
			if err == nil && (!ok || string(got) != string(val(v))) {
				err = fmt.Errorf("search(%d) = %x, %v", k, got, ok)
			}
			return err
		}
	}
	ops := map[string]func(client) error{
		"search": found(1000, 1001),
		"search-miss": func(c client) error {
			_, ok, err := c.Search(key(999))
			if err == nil && ok {
				err = errors.New("search(999) found an absent key")
			}
			return err
		},
		"update": func(c client) error { return c.Update(key(1000), val(7)) },
		"update-miss": func(c client) error {
			if err := c.Update(key(1001), val(7)); !errors.Is(err, indexes.ErrNotFound) {
				return fmt.Errorf("update of an absent key: %v", err)
			}
			return nil
		},
		"insert": func(c client) error { return c.Insert(key(1001), val(7)) },
		"delete": func(c client) error { return c.Delete(key(1002)) },
		"scan": func(c client) error {
			n := 0
			err := c.Scan(key(1100), 100, func(k, v []byte) bool { n++; return true })
			if err == nil && n != 100 {
				err = fmt.Errorf("scan returned %d entries, want 100", n)
			}
			return err
		},
		"insert-split": func(c client) error { return c.Insert(key(305), val(7)) },
		"delete-merge": func(c client) error { return c.Delete(key(512)) },
		// The split above left the SLC without the new node: a key of its
		// upper half is one sibling pointer further on.
		"search-stale": found(360, 361),
	}
	named := make([]indextest.Op[client], len(golden))
	for i, g := range golden {
		named[i] = indextest.Op[client]{Name: g.name, Do: ops[g.name]}
	}
	for i, got := range indextest.VerbsPerOp(t, f, 2, x.NewClient, warm, named) {
		if want := golden[i].want.counters(); got != want {
			t.Errorf("%s: verbs\n got %v\nwant %v", golden[i].name, got, want)
		}
	}
	if len(x.cns[0].free) != 1 {
		t.Errorf("after the merge the free list holds %d data nodes, want 1", len(x.cns[0].free))
	}
}
