package fabrictest

import (
	"slices"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// testCluster checks the shape of a fresh fabric: its regions, where
// clients run, and the determinism of their random streams.
func testCluster(t *testing.T, s suite) {
	cfg := s.config()
	cfg.Mode = s.mode
	f := s.build(t, cfg)

	t.Run("config", func(t *testing.T) {
		if f.Name() == "" {
			t.Error("Name is empty")
		}
		if got := f.Config(); got != cfg {
			t.Errorf("Config = %+v, want %+v", got, cfg)
		}
	})

	t.Run("regions", func(t *testing.T) {
		for _, n := range cfg.MemoryNodeIDs() {
			checkRegions(t, f, n, []wantRegion{{"main", cfg.MemoryBytes, false}, {"device", cfg.DeviceBytes, true}})
		}
		c := cfg.ComputeNodeIDs()[1]
		if _, err := f.AddRegion(c, "peer", 64<<10); err != nil {
			t.Fatalf("AddRegion: %v", err)
		}
		checkRegions(t, f, c, []wantRegion{{"main", cfg.ComputeBytes, false}, {"peer", 64 << 10, false}})
		if _, err := f.AddRegion(c, "peer", 4096); err == nil {
			t.Error("AddRegion of an existing name succeeded")
		}
		if _, err := f.Region(c, "nope"); err == nil {
			t.Error(`Region(c, "nope") succeeded`)
		}
	})

	t.Run("clients", func(t *testing.T) {
		a := scratch(t, f, 0)
		for _, n := range cfg.ComputeNodeIDs() {
			for th := range cfg.Threads {
				f.Go(n, th, func(ep transport.Endpoint) {
					if ep.Node() != n || ep.Thread() != th {
						t.Errorf("client added on node %d thread %d runs on node %d thread %d", n, th, ep.Node(), ep.Thread())
					}
					before := ep.Now()
					writeWord(t, ep, a, 1)
					if after := ep.Now(); after < before {
						t.Errorf("Now went back from %d to %d", before, after)
					}
				})
			}
		}
		run(t, f)
		run(t, f) // nothing added: an empty run succeeds
	})

	t.Run("random streams", func(t *testing.T) {
		a, b := draws(t, s, cfg), draws(t, s, cfg)
		if !slices.Equal(a, b) {
			t.Errorf("two fabrics with the same config and seed drew %v and %v", a, b)
		}
		if slices.Equal(a[:4], a[4:]) {
			t.Errorf("two clients drew the same numbers %v", a[:4])
		}
	})
}

type wantRegion struct {
	name   string
	size   uint64
	device bool
}

func checkRegions(t *testing.T, f transport.Fabric, n transport.NodeID, want []wantRegion) {
	t.Helper()
	got := f.Regions(n)
	if len(got) != len(want) {
		t.Fatalf("node %d has regions %v, want %d", n, got, len(want))
	}
	for i, w := range want {
		r := got[i]
		if r.Node != n || r.Name != w.name || r.Size != w.size || r.Device != w.device {
			t.Errorf("node %d region %d = %+v, want %+v", n, i, r, w)
		}
		if r.Base.Node() != n || r.Base.IsNil() || r.Base.Offset()%transport.RegionAlign != 0 {
			t.Errorf("region %v: base %v is not a %d-aligned address on node %d", r, r.Base, transport.RegionAlign, n)
		}
		if i > 0 && r.Base < got[i-1].End() {
			t.Errorf("region %v overlaps %v", r, got[i-1])
		}
		if byName := region(t, f, n, w.name); byName != r {
			t.Errorf("Region(%d, %q) = %v, Regions lists %v", n, w.name, byName, r)
		}
	}
}

// draws builds a fabric and returns four numbers drawn by a client on
// thread 0, then four by a client on thread 1, of the first compute node.
func draws(t *testing.T, s suite, cfg transport.Config) []uint64 {
	f := s.build(t, cfg)
	out := make([]uint64, 8)
	c := cfg.ComputeNodeIDs()[0]
	for th := range 2 {
		f.Go(c, th, func(ep transport.Endpoint) {
			for i := range 4 {
				out[th*4+i] = ep.Rand().Uint64()
			}
		})
	}
	run(t, f)
	return out
}
