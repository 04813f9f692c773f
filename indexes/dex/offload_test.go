package dex

import (
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// TestOffloadDecision checks section 6.1's rule as the artifact takes it
// (decide, offload=cost): a thread's first 50 decisions fetch and its next
// 50 offload, all sampled; nothing is offloaded before the cache has
// handed out every page; leaves and nodes above M are never decided on;
// and on full windows a decision follows l_p < (L+1)(l_o + l_s)c, sampled
// 1% of the time and contrary 1% of the time.
func TestOffloadDecision(t *testing.T) {
	f, x := newGolden(t, map[string]string{"offload": "cost"})
	f.Go(2, 0, func(ep transport.Endpoint) {
		c := x.newClient(ep)
		check := func(what string, lv int, want decision) {
			t.Helper()
			if got := c.decide(lv); got != want {
				t.Errorf("%s: decide(%d) = %+v, want %+v", what, lv, got, want)
			}
		}
		for range avgWindow {
			check("filling the fetch window", 1, decision{sample: true})
			c.fetchLat.add(2000)
		}
		check("offloading before the cache is full", 1, decision{sample: true})
		c.cn.used.Store(int64(len(c.cn.frames)))
		for range avgWindow {
			check("filling the RPC window", 1, decision{offload: true, sample: true})
			c.rpcLat.add(3000)
		}
		check("leaf", 0, decision{})
		check("above M", x.opt.m+1, decision{})

		// l_p = 3000 ns against (1+1)(2000 + l_s)1.2 > 4800 ns at level 1:
		// offload, but for the contrary decisions.
		count := func(lv int) (offloads, samples int) {
			for range 10000 {
				d := c.decide(lv)
				if d.offload {
					offloads++
				}
				if d.sample {
					samples++
				}
			}
			return offloads, samples
		}
		if off, smp := count(1); off < 9800 || off > 9950 || smp < 100 || smp > 300 {
			t.Errorf("l_p below the estimate: %d offloads and %d samples in 10000 decisions, want about 9900 and 200", off, smp)
		}
		// l_p = 6000 ns: fetch at level 1, offload at level 2 (7200 ns).
		for range avgWindow {
			c.rpcLat.add(6000)
		}
		if off, _ := count(1); off < 50 || off > 200 {
			t.Errorf("l_p above the estimate at level 1: %d offloads in 10000 decisions, want about 100", off)
		}
		if off, _ := count(2); off < 9800 || off > 9950 {
			t.Errorf("l_p below the estimate at level 2: %d offloads in 10000 decisions, want about 9900", off)
		}
	})
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
}
