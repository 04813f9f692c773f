package sherman

import (
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// TestHandOver: threads of one compute node updating one key queue on the
// local lock, and a holder hands the global lock to the next with the
// local one, at most handover holders per remote acquisition, so
// same-node contention costs few CASes and unlock WRITEs. Without HOCL
// every update pays its CAS, and failed ones on top.
func TestHandOver(t *testing.T) {
	const clients, updates = 4, 50
	cases := []struct {
		name       string
		params     map[string]string
		minCAS     uint64
		maxCAS     uint64
		maxUnlocks uint64
	}{
		{"hocl", map[string]string{}, clients * updates / 8, clients * updates / 4, clients * updates / 4},
		{"no-handover", map[string]string{"handover": "0"}, clients * updates, clients * updates, clients * updates},
		{"no-hocl", map[string]string{"hocl": "false"}, clients*updates + 1, 1 << 30, clients * updates},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFabric(t, "sim", cluster(1, 2, transport.ModePaper))
			x := build(t, f, tc.params, 1<<20, nil)
			if err := x.BulkLoad(f.Setup(2), loadSeq(100, 1)); err != nil {
				t.Fatal(err)
			}
			for i := range clients {
				f.Go(2, i%2, func(ep transport.Endpoint) {
					c := x.NewClient(ep)
					for u := range updates {
						if err := c.Update(key(50), val(uint64(u))); err != nil {
							t.Error(err)
						}
					}
				})
			}
			if err := f.Run(); err != nil {
				t.Fatal(err)
			}
			st := f.Stats()
			v := st.Verbs.Total()
			cas := v[transport.VerbCAS].Count
			unlocks := v[transport.VerbWrite].Count - clients*updates // beyond the entry WRITEs
			if cas < tc.minCAS || cas > tc.maxCAS {
				t.Errorf("%d updates took %d CASes, want %d-%d", clients*updates, cas, tc.minCAS, tc.maxCAS)
			}
			if unlocks > tc.maxUnlocks {
				t.Errorf("%d updates took %d unlock WRITEs, want at most %d", clients*updates, unlocks, tc.maxUnlocks)
			}
			t.Logf("%d updates: %d CAS, %d unlock WRITEs", clients*updates, cas, unlocks)
		})
	}
}
