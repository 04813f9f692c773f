package sim

import (
	"math/rand/v2"
	"testing"
)

// A reservation booked ahead leaves the link usable before it, and
// reservations queue behind one another when they overlap.
func TestTimelineBackfills(t *testing.T) {
	var tl timeline
	if end := tl.serve(0, 1000, 10); end != 1010 {
		t.Fatalf("booking ahead ends at %d, want 1010", end)
	}
	if end := tl.serve(0, 0, 10); end != 10 {
		t.Errorf("a request now waited behind a future booking: ends at %d, want 10", end)
	}
	if end := tl.serve(0, 995, 10); end != 1020 {
		t.Errorf("an overlapping request ends at %d, want 1020 (queued behind the booking)", end)
	}
	if end := tl.serve(0, 5, 10); end != 20 {
		t.Errorf("FIFO behind the first request: ends at %d, want 20", end)
	}
	if end := tl.serve(0, 1020, 5); end != 1025 || len(tl.iv) != 2 {
		t.Errorf("touching intervals should merge: end %d, %d intervals %v", end, len(tl.iv), tl.iv)
	}
	if end := tl.serve(1030, 1030-10, 10); end != 1035 {
		t.Errorf("a booking reaching back into the past queues behind what is there: end %d, want 1035", end)
	}
	if end := tl.serve(pastWindow+2000, pastWindow+2000, 1); end != pastWindow+2001 {
		t.Errorf("a booking after everything ends at %d, want %d", end, pastWindow+2001)
	}
	tl.prune(pastWindow + 2000)
	if len(tl.iv) != 1 {
		t.Errorf("intervals older than the window should be dropped: %v", tl.iv)
	}
	if tl.busy != 56 {
		t.Errorf("busy %d ps, want 56", tl.busy)
	}
}

// Saturated from a single arrival stream, the timeline is one interval.
func TestTimelineSaturatedStaysSmall(t *testing.T) {
	var tl timeline
	var now int64
	for range 10000 {
		now = tl.serve(now, now, 17)
	}
	if len(tl.iv) != 1 || now != 170000 {
		t.Errorf("%d intervals, end %d; want 1 and 170000", len(tl.iv), now)
	}
}

// TestTimelineFirstFit checks serve against a plain model, a list of the
// bookings searched in full: each reservation starts at the earliest time
// from its at on that overlaps no booking, and the intervals are the
// bookings merged, sorted and disjoint. Reservations reach back less than
// pastWindow, so pruning drops nothing the model would find.
func TestTimelineFirstFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var tl timeline
	var booked []interval
	now := int64(0)
	for k := range 20000 {
		now += rng.Int64N(200)
		at := now - rng.Int64N(2000) + rng.Int64N(6000)
		d := 1 + rng.Int64N(300)
		s := at
		for moved := true; moved; {
			moved = false
			for _, b := range booked {
				if s < b.e && b.s < s+d {
					s, moved = b.e, true
				}
			}
		}
		booked = append(booked, interval{s, s + d})
		if end := tl.serve(now, at, d); end != s+d {
			t.Fatalf("reservation %d (%d ps from %d): ends at %d, want %d", k, d, at, end, s+d)
		}
		for i := 1; i < len(tl.iv); i++ {
			if tl.iv[i-1].e >= tl.iv[i].s {
				t.Fatalf("reservation %d: intervals %v and %v not sorted, disjoint and merged", k, tl.iv[i-1], tl.iv[i])
			}
		}
	}
}
