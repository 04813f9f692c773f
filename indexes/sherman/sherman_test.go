package sherman

import (
	"fmt"
	"strings"
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

// goldenOps are the operations of the golden test, in tag order.
var goldenOps = []string{"search", "search-miss", "update", "insert", "delete", "scan", "insert-split"}

// golden are the verbs of each operation with a warm cache (8-byte keys
// and values, 1 KB nodes: 18-byte leaf entries, 40 per bulk-loaded leaf),
// by variant; "+p" is P-Sherman on a leaf, and its parent, inside the
// client's own partition (the root above them straddles partitions).
var golden = map[string]map[string]verbs{
	"versions": {
		"search":       {R: {1, 0, 1024}},
		"search-miss":  {R: {1, 0, 1024}},
		"update":       {C: {1, 8, 8}, R: {1, 0, 1024}, W: {2, 18 + 8, 0}},
		"insert":       {C: {1, 8, 8}, R: {1, 0, 1024}, W: {2, 18 + 8, 0}},
		"delete":       {C: {1, 8, 8}, R: {1, 0, 1024}, W: {2, 18 + 8, 0}},
		"scan":         {R: {4, 0, 4 * 1024}},
		"insert-split": {C: {2, 16, 16}, R: {2, 0, 2048}, W: {5, 3*1024 + 2*8, 0}},
	},
	"optlock": {
		"search":       {R: {3, 0, 8 + 1024 + 8}},
		"search-miss":  {R: {3, 0, 8 + 1024 + 8}},
		"update":       {C: {1, 8, 8}, R: {2, 0, 8 + 1024}, W: {2, 18 + 8, 0}},
		"insert":       {C: {1, 8, 8}, R: {2, 0, 8 + 1024}, W: {2, 18 + 8, 0}},
		"delete":       {C: {1, 8, 8}, R: {2, 0, 8 + 1024}, W: {2, 18 + 8, 0}},
		"scan":         {R: {12, 0, 4 * (8 + 1024 + 8)}},
		"insert-split": {C: {2, 16, 16}, R: {4, 0, 2 * (8 + 1024)}, W: {5, 3*1024 + 2*8, 0}},
	},
	"crc": {
		"search":       {R: {1, 0, 1024}},
		"search-miss":  {R: {1, 0, 1024}},
		"update":       {C: {1, 8, 8}, R: {1, 0, 1024}, W: {3, 18 + 8 + 8, 0}},
		"insert":       {C: {1, 8, 8}, R: {1, 0, 1024}, W: {3, 18 + 8 + 8, 0}},
		"delete":       {C: {1, 8, 8}, R: {1, 0, 1024}, W: {3, 18 + 8 + 8, 0}},
		"scan":         {R: {4, 0, 4 * 1024}},
		"insert-split": {C: {2, 16, 16}, R: {2, 0, 2048}, W: {5, 3*1024 + 2*8, 0}},
	},
	"versions+p": {
		"search":       {R: {1, 0, 1024}},
		"search-miss":  {R: {1, 0, 1024}},
		"update":       {R: {1, 0, 1024}, W: {1, 18, 0}},
		"insert":       {R: {1, 0, 1024}, W: {1, 18, 0}},
		"delete":       {R: {1, 0, 1024}, W: {1, 18, 0}},
		"scan":         {R: {4, 0, 4 * 1024}},
		"insert-split": {R: {2, 0, 2048}, W: {3, 3 * 1024, 0}},
	},
	"optlock+p": {
		"search":       {R: {1, 0, 1024}},
		"search-miss":  {R: {1, 0, 1024}},
		"update":       {R: {1, 0, 1024}, W: {1, 18, 0}},
		"insert":       {R: {1, 0, 1024}, W: {1, 18, 0}},
		"delete":       {R: {1, 0, 1024}, W: {1, 18, 0}},
		"scan":         {R: {4, 0, 4 * 1024}},
		"insert-split": {R: {2, 0, 2048}, W: {3, 3 * 1024, 0}},
	},
	"crc+p": {
		"search":       {R: {1, 0, 1024}},
		"search-miss":  {R: {1, 0, 1024}},
		"update":       {R: {1, 0, 1024}, W: {2, 18 + 8, 0}},
		"insert":       {R: {1, 0, 1024}, W: {2, 18 + 8, 0}},
		"delete":       {R: {1, 0, 1024}, W: {2, 18 + 8, 0}},
		"scan":         {R: {4, 0, 4 * 1024}},
		"insert-split": {R: {2, 0, 2048}, W: {3, 3 * 1024, 0}},
	},
}

// TestVerbsPerOperation is the golden verb count of every operation, by
// kind and bytes, with a warm cache on the simulator: DEX Table 2's
// Sherman read-only = 3 READs of 1040 B (optlock) and P-Sherman = 1 READ
// of 1 KB, and Sherman's write = CAS + READ + batched entry and unlock
// WRITEs.
func TestVerbsPerOperation(t *testing.T) {
	for _, name := range []string{"versions", "versions/chain", "optlock", "optlock/dex", "crc", "versions+p", "optlock+p", "crc+p"} {
		t.Run(name, func(t *testing.T) {
			v, part := name, false
			if len(name) > 2 && name[len(name)-2:] == "+p" {
				v, part = name[:len(name)-2], true
			}
			f := newFabric(t, "sim", cluster(2, 1, transport.ModePaper))
			parts := [][]byte{key(0), key(4000)}
			v, check, _ := strings.Cut(v, "/")
			params := map[string]string{"consistency": v, "partitioned": fmt.Sprint(part)}
			switch check {
			case "dex":
				params["optcheck"] = check // DEX's test: the same verbs when uncontended
			case "chain":
				params["scan"] = check // the same READs, one after another
			}
			x := build(t, f, params, 1<<20, parts)
			if err := x.BulkLoad(f.Setup(2), loadSeq(1900, 2)); err != nil {
				t.Fatal(err)
			}
			// Warm the cache and root, and the allocator's chunk on each
			// memory node with splits of two other leaves (bulk-loaded
			// leaves hold 40 keys: 2-80, 82-160, ...; a leaf splits when
			// its 54th entry goes in).
			warm := func(c indexes.Client, _ transport.Endpoint) {
				for _, r := range [][2]uint64{{1, 27}, {163, 189}, {323, 347}} {
					for k := r[0]; k <= r[1]; k += 2 {
						if err := c.Insert(key(k), val(k)); err != nil {
							t.Error(err)
						}
					}
				}
			}
			type client = indexes.Client
			ops := map[string]func(client) error{
				"search": func(c client) error {
					got, ok, err := c.Search(key(100))
					if err == nil && (!ok || string(got) != string(val(101))) {
						err = fmt.Errorf("search(100) = %x, %v", got, ok)
					}
					return err
				},
				"search-miss": func(c client) error {
					_, ok, err := c.Search(key(99))
					if err == nil && ok {
						err = fmt.Errorf("search(99) found an absent key")
					}
					return err
				},
				"update": func(c client) error { return c.Update(key(100), val(7)) },
				"insert": func(c client) error { return c.Insert(key(101), val(7)) },
				"delete": func(c client) error { return c.Delete(key(102)) },
				"scan": func(c client) error {
					n := 0
					err := c.Scan(key(400), 100, func(k, v []byte) bool { n++; return true })
					if err == nil && n != 100 {
						err = fmt.Errorf("scan returned %d entries, want 100", n)
					}
					return err
				},
				"insert-split": func(c client) error { return c.Insert(key(349), val(7)) },
			}
			named := make([]indextest.Op[client], len(goldenOps))
			for i, op := range goldenOps {
				named[i] = indextest.Op[client]{Name: op, Do: ops[op]}
			}
			for i, got := range indextest.VerbsPerOp(t, f, 2, x.NewClient, warm, named) {
				op := goldenOps[i]
				variant, _, _ := strings.Cut(name, "/")
				if want := golden[variant][op].counters(); got != want {
					t.Errorf("%s: verbs\n got %v\nwant %v", op, got, want)
				}
			}
		})
	}
}
