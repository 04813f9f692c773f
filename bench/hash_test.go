package bench

import (
	"testing"

	"github.com/dmbench/dmbench/workloads"
)

// Two seeds give two event hashes even where they give the same timing:
// the Expected bound's uniform searches all take one round trip, so only
// the addresses they READ tell the runs apart.
func TestSeedsGiveDifferentHashes(t *testing.T) {
	hashes := map[uint64]string{}
	for _, seed := range []uint64{7, 8} {
		c := smallConfig(t, "dmtree-search-only", workloads.Properties{"requestdistribution": "uniform", "warmupreadall": "false"})
		c.Seed, c.Workload.Seed = seed, int64(seed)
		res, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		hashes[seed] = res.EventHash
	}
	if hashes[7] == hashes[8] {
		t.Errorf("seeds 7 and 8 give the same event hash %s", hashes[7])
	}
}
