package sim

import (
	"fmt"
	"testing"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// lockCycle runs threads clients on one compute node, one per thread, each
// taking a Mutex of kind k rounds times around a 100 ns critical section
// with 200 ns of work outside it, and returns the virtual ns per
// acquisition.
func lockCycle(t *testing.T, k transport.LockKind, threads, coroutines, rounds int) float64 {
	t.Helper()
	f := newTestFabric(t, transport.Config{ComputeNodes: 1, Threads: threads}, CX6)
	mu := transport.Mutex{Kind: k}
	for th := range threads {
		for range coroutines {
			f.Go(1, th, func(ep transport.Endpoint) {
				for range rounds {
					mu.Lock(ep)
					ep.Compute(100)
					mu.Unlock()
					ep.Compute(200)
				}
			})
		}
	}
	run(t, f)
	return float64(f.Now()) / float64(threads*coroutines*rounds)
}

// A saturated lock serves one holder per handoff plus critical section. A
// queue lock's handoff is one line whatever the crowd; a ticket lock's and
// a spinlock's grow by half a line per further waiting core, so their
// throughput collapses as cores are added (Boyd-Wickizer et al. 2012).
func TestLockHandoffPhysics(t *testing.T) {
	x := float64(cost.CachelineTransfer())
	for _, threads := range []int{8, 32} {
		queue := lockCycle(t, transport.LockQueue, threads, 1, 200)
		within(t, fmt.Sprintf("queue lock, %d cores: ns per acquisition", threads), queue, 100+x, 0.05)
		// Saturated, every other core waits: spinners = threads-1.
		want := 100 + x + x*float64(threads-2)/2
		for _, k := range []transport.LockKind{transport.LockTicket, transport.LockSpin} {
			got := lockCycle(t, k, threads, 1, 200)
			within(t, fmt.Sprintf("%s lock, %d cores: ns per acquisition", k, threads), got, want, 0.1)
		}
	}
	// One core's coroutines hand the lock to each other for free: they
	// take turns on the core rather than spin against each other.
	if got := lockCycle(t, transport.LockTicket, 1, 8, 100); got < 299 || got > 301 {
		t.Errorf("ticket lock among one thread's coroutines: %.1f ns per acquisition, want 300 (the core's work alone)", got)
	}
}

// A line that every core touches serialises them: 16 cores incrementing
// one counter 100 times each take 1,600 transfers end to end, not 100.
func TestContendedLineSerialises(t *testing.T) {
	const threads, rounds = 16, 100
	f := newTestFabric(t, transport.Config{ComputeNodes: 1, Threads: threads}, CX6)
	var line transport.Line
	for th := range threads {
		f.Go(1, th, func(ep transport.Endpoint) {
			for range rounds {
				line.Touch(ep)
			}
		})
	}
	run(t, f)
	want := threads * rounds * cost.CachelineTransfer()
	if got := f.Now(); got < want || got > want+cost.CachelineTransfer() {
		t.Errorf("%d cores x %d touches of one line took %d ns, want %d (one transfer each, one at a time)", threads, rounds, got, want)
	}
	// One core's touches of a line it holds are free.
	g := newTestFabric(t, transport.Config{ComputeNodes: 1, Threads: 1}, CX6)
	var own transport.Line
	g.Go(1, 0, func(ep transport.Endpoint) {
		for range rounds {
			own.Touch(ep)
		}
	})
	run(t, g)
	if got := g.Now(); got != cost.CachelineTransfer() {
		t.Errorf("one core touching its own line %d times took %d ns, want one transfer (%d)", rounds, got, cost.CachelineTransfer())
	}
}

// A line copied to another compute node (Line.CopyTo) is held there by
// the thread that held the original: that thread's touch is free, as on
// a line it had touched itself, and the original's holder, on the other
// node, pays a transfer. A line no core holds copies as one.
func TestLineCopy(t *testing.T) {
	f := newTestFabric(t, transport.Config{ComputeNodes: 2, Threads: 2}, CX6)
	ids := f.Config().ComputeNodeIDs()
	var orig, copied, untouched, copiedUntouched transport.Line
	f.Go(ids[0], 1, orig.Touch)
	run(t, f)
	orig.CopyTo(&copied, ids[1])
	untouched.CopyTo(&copiedUntouched, ids[1])
	touch := func(l *transport.Line, n transport.NodeID, thread int) int64 {
		var took int64
		f.Go(n, thread, func(ep transport.Endpoint) {
			start := ep.Now()
			l.Touch(ep)
			took = ep.Now() - start
		})
		run(t, f)
		return took
	}
	x := cost.CachelineTransfer()
	for _, tc := range []struct {
		name   string
		line   *transport.Line
		node   transport.NodeID
		thread int
		want   int64
	}{
		{"the copy, by its holder on the new node", &copied, ids[1], 1, 0},
		{"the copy, by the original's holder", &copied, ids[0], 1, x},
		{"a copy of a line no core held", &copiedUntouched, ids[1], 1, x},
	} {
		if got := touch(tc.line, tc.node, tc.thread); got != tc.want {
			t.Errorf("touch of %s: %d ns, want %d", tc.name, got, tc.want)
		}
	}
}
