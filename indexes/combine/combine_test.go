package combine

import (
	"testing"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/sim"
)

// Ten writers of one key on one node: the first cuts its round at once
// and runs alone; the nine that queue while its write is in flight share
// the next round, which writes the value of the last of them; the read side runs at most Window+1 in a
// round and the rest alone.
func TestRounds(t *testing.T) {
	cfg := transport.Config{ComputeNodes: 1, MemoryNodes: 1, Threads: 10, MemoryCores: 1, ComputeCores: 10, MemoryBytes: 1 << 20}
	f, err := sim.New(cfg, sim.CX6)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var writes Table[string]
	reads := Table[int]{Window: 3}
	var written []string
	var alone int
	for i := range 10 {
		f.Go(1, i, func(ep transport.Endpoint) {
			ep.Compute(int64(i)) // arrive in order
			v := string(rune('a' + i))
			writes.Do(ep, []byte("k"), []byte(v), func(r *Round[string]) string {
				w := string(r.Snapshot())
				written = append(written, w)
				ep.Compute(2000) // the remote write, after the cut
				return w
			})
			reads.Do(ep, []byte("k"), nil, func(r *Round[int]) int {
				if r.q == nil {
					alone++
				}
				r.Snapshot()
				ep.Compute(1000)
				return 0
			})
		})
	}
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	if len(written) != 2 || written[0] != "a" || written[1] != "j" {
		t.Errorf("rounds wrote %q; want [a j]", written)
	}
	if s := writes.Sizes(); s.Rounds() != 2 || s.Ops() != 10 || s.Max() != 9 {
		t.Errorf("write rounds %d of %d ops (max %d); want 2 of 10 (max 9)", s.Rounds(), s.Ops(), s.Max())
	}
	if s := reads.Sizes(); s.Ops()+uint64(alone) != 10 || s.Max() > 4 {
		t.Errorf("read rounds served %d, %d ran alone, largest round %d; want 10 in all and rounds of at most 4", s.Ops(), alone, s.Max())
	}
}
