package dmtree

import (
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/indexes/fpbtree"
	"github.com/dmbench/dmbench/indexes/indextest"
	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// The time of each operation falls in the steps of Table 1: a search in
// the internal cache, the fingerprint traversal and the entry READ, with
// no locking and, once its node holds a current copy of the table, no
// synchronisation; a write also in locking, and in synchronising the
// primary table when that lives on a peer (a local primary is traversed,
// not synchronised). Every nanosecond of an operation is in some step.
func TestTimeBreakdown(t *testing.T) {
	spec, _ := indexes.Lookup("dmtree")
	for s, name := range map[transport.Step]string{
		fpbtree.StepInternalCache: "internal_cache", fpbtree.StepFPTraversal: "fp_traversal",
		fpbtree.StepLocking: "locking", fpbtree.StepFPSync: "fp_sync", fpbtree.StepKV: "kv",
	} {
		if int(s) > len(spec.Steps) || spec.Steps[s-1] != name {
			t.Errorf("step %d is named %q in the registry, want %q", s, spec.Steps, name)
		}
	}
	cfg := transport.Config{ComputeNodes: 3, MemoryNodes: 1, Threads: 1, MemoryCores: 1, ComputeCores: 1, MemoryBytes: 256 << 20}
	f := indextest.SimFabric(t, cfg, sim.CX6)
	d := indextest.Build(t, "dmtree", indexes.Env{Fabric: f, KeySize: ks, ValueSize: vs, CacheBytes: 8 << 20}, nil).(*DMTree)
	const records = 2400
	if err := d.BulkLoad(f.Setup(1), loaded(records)); err != nil {
		t.Fatal(err)
	}
	const me = transport.NodeID(1)
	phase := func(body func(c *fpbtree.Client, ep transport.Endpoint)) {
		t.Helper()
		f.Go(me, 0, func(ep transport.Endpoint) { body(d.Tree.Client(ep), ep) })
		if err := f.Run(); err != nil {
			t.Fatal(err)
		}
	}
	// Warm the internal cache and the table copies, and find a leaf
	// whose primary table is on a peer and one whose primary is local.
	leaf := map[bool]uint64{}
	phase(func(c *fpbtree.Client, _ transport.Endpoint) {
		for i := range uint64(records) {
			if _, _, err := c.Search(key(i * 3)); err != nil {
				t.Error(err)
				return
			}
		}
		for j := uint64(1); j < records/24 && len(leaf) < 2; j++ {
			_, fp, err := c.Locate(key(j * 72))
			if err != nil {
				t.Error(err)
				return
			}
			p, _ := d.PrimaryNode(fp)
			if _, ok := leaf[p != me]; !ok {
				leaf[p != me] = j
			}
		}
	})
	if len(leaf) < 2 {
		t.Fatalf("leaves with remote and local primaries: %v", leaf)
	}
	const (
		ic, fpt, lk, sy, kv = fpbtree.StepInternalCache, fpbtree.StepFPTraversal, fpbtree.StepLocking, fpbtree.StepFPSync, fpbtree.StepKV
	)
	cases := []struct {
		name         string
		remote       bool
		do           func(c *fpbtree.Client, j uint64) error
		spent, spare []transport.Step // steps with time, steps without
	}{
		{"search", true, func(c *fpbtree.Client, j uint64) error { _, _, err := c.Search(key(j*72 + 3)); return err },
			[]transport.Step{ic, fpt, kv}, []transport.Step{lk, sy}},
		{"search local primary", false, func(c *fpbtree.Client, j uint64) error { _, _, err := c.Search(key(j*72 + 3)); return err },
			[]transport.Step{ic, fpt, kv}, []transport.Step{lk, sy}},
		{"update", true, func(c *fpbtree.Client, j uint64) error { return c.Update(key(j*72+6), val(1)) },
			[]transport.Step{ic, fpt, lk, sy, kv}, nil},
		{"insert", true, func(c *fpbtree.Client, j uint64) error { return c.Insert(freshKey(j), val(2)) },
			[]transport.Step{ic, fpt, lk, sy, kv}, nil},
		{"update local primary", false, func(c *fpbtree.Client, j uint64) error { return c.Update(key(j*72+9), val(3)) },
			[]transport.Step{ic, fpt, lk, kv}, []transport.Step{sy}},
	}
	const tag = transport.Tag(1)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f.ResetStats()
			var latency int64
			phase(func(c *fpbtree.Client, ep transport.Endpoint) {
				ep.SetTag(tag)
				start := ep.Now()
				if err := tc.do(c, leaf[tc.remote]); err != nil {
					t.Error(err)
				}
				latency = ep.Now() - start
			})
			steps := f.Stats().Verbs.Time.Steps[tag]
			t.Logf("latency %d ns, by step %v", latency, steps[:len(spec.Steps)+1])
			for _, s := range tc.spent {
				if steps[s] == 0 {
					t.Errorf("no time in %s", spec.Steps[s-1])
				}
			}
			for _, s := range tc.spare {
				if steps[s] != 0 {
					t.Errorf("%d ns in %s, want none", steps[s], spec.Steps[s-1])
				}
			}
			var sum int64
			for _, ns := range steps {
				sum += ns
			}
			// The fabric adds each wait to a step in whole nanoseconds,
			// so the sum may fall short by under 1 ns a verb or compute
			// charge, of which these operations have fewer than slack.
			const slack = 20
			if sum > latency || latency-sum >= slack {
				t.Errorf("steps sum to %d ns, the operation took %d", sum, latency)
			}
		})
	}
}
