package experiments

import "testing"

// A panel that starts from an empty tree (Dolphin's LOAD) gets the cache
// its paper gives every panel, scaled by the records it inserts, where
// the other panels scale by the records they load.
func TestScaledCacheOfAnEmptyTree(t *testing.T) {
	s, err := Lookup("dolphin/fig7")
	if err != nil {
		t.Fatal(err)
	}
	points, err := s.Expand("small")
	if err != nil {
		t.Fatal(err)
	}
	sc := s.Scales["small"]
	paper := 2000.0 * (1 << 20) / float64(s.Cache.PaperRecords)
	for _, p := range points {
		records := sc.Records
		if p.Panel == "load" {
			records = sc.Ops + sc.Warmup
		}
		if want := uint64(paper * float64(records)); p.Config.CacheBytes != want {
			t.Errorf("%s: cache of %d bytes, want %d (2000 MiB scaled by %d of 512 M records)", p.ID, p.Config.CacheBytes, want, records)
		}
	}
}
