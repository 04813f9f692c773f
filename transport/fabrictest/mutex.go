package fabrictest

import (
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// testMutex has the clients of one compute node increment a counter in
// remote memory with READ, Compute and WRITE under a transport.Mutex: a
// lost update would show in the final value.
func testMutex(t *testing.T, s suite) {
	cfg := s.config()
	cfg.Threads = 4
	f := s.build(t, cfg)
	c := cfg.ComputeNodeIDs()[0]
	counter := scratch(t, f, 0)
	const perThread, rounds = 3, 40
	var mu transport.Mutex
	for th := range cfg.Threads {
		for range perThread {
			f.Go(c, th, func(ep transport.Endpoint) {
				for range rounds {
					mu.Lock(ep)
					v, good := readWord(t, ep, counter)
					ep.Compute(100)
					good = good && writeWord(t, ep, counter, v+1)
					mu.Unlock()
					if !good {
						return
					}
				}
			})
		}
	}
	run(t, f)
	if got, _ := readWord(t, f.Setup(c), counter); got != uint64(cfg.Threads*perThread*rounds) {
		t.Errorf("counter = %d after %d locked increments", got, cfg.Threads*perThread*rounds)
	}
}

// testRWMutex checks that readers hold a transport.RWMutex together and
// that a writer holds it alone, with counts of holders kept in remote
// memory.
func testRWMutex(t *testing.T, s suite) {
	cfg := s.config()
	cfg.Threads = 3
	f := s.build(t, cfg)
	c := cfg.ComputeNodeIDs()[0]
	base := scratch(t, f, 0)
	readers, writers, counter := base, base.Add(8), base.Add(16)
	var mu transport.RWMutex

	t.Run("readers share", func(t *testing.T) {
		// Each reader waits inside the lock until all are inside: this
		// finishes only if they hold the lock at the same time.
		const n, patience = 6, 1_000_000
		for i := range n {
			f.Go(c, i%cfg.Threads, func(ep transport.Endpoint) {
				mu.RLock(ep)
				defer mu.RUnlock()
				if _, err := ep.FAA(readers, 1); !ok(t, err, "FAA") {
					return
				}
				for spin := 0; ; spin++ {
					v, good := readWord(t, ep, readers)
					if !good || v == n {
						break
					}
					if spin == patience {
						t.Errorf("after %d polls only %d of %d readers hold the lock together", patience, v, n)
						return
					}
				}
			})
		}
		run(t, f)
		writeWord(t, f.Setup(c), readers, 0)
	})

	t.Run("writers exclude", func(t *testing.T) {
		const nWriters, nReaders, rounds = 4, 8, 25
		for i := range nWriters {
			f.Go(c, i%cfg.Threads, func(ep transport.Endpoint) {
				for range rounds {
					mu.Lock(ep)
					good := writeLocked(t, ep, readers, writers, counter)
					mu.Unlock()
					if !good {
						return
					}
				}
			})
		}
		for i := range nReaders {
			f.Go(c, i%cfg.Threads, func(ep transport.Endpoint) {
				for range rounds {
					mu.RLock(ep)
					good := readLocked(t, ep, readers, writers)
					mu.RUnlock()
					if !good {
						return
					}
				}
			})
		}
		run(t, f)
		ep := f.Setup(c)
		if got, _ := readWord(t, ep, counter); got != nWriters*rounds {
			t.Errorf("counter = %d after %d exclusive increments", got, nWriters*rounds)
		}
	})
}

// writeLocked is a writer's critical section: no other holder may be in.
func writeLocked(t *testing.T, ep transport.Endpoint, readers, writers, counter transport.GAddr) bool {
	old, err := ep.FAA(writers, 1)
	if !ok(t, err, "FAA") {
		return false
	}
	if old != 0 {
		t.Errorf("a writer got the lock while %d other writers held it", old)
	}
	if r, good := readWord(t, ep, readers); good && r != 0 {
		t.Errorf("a writer got the lock while %d readers held it", r)
	}
	v, good := readWord(t, ep, counter)
	ep.Compute(100)
	good = good && writeWord(t, ep, counter, v+1)
	_, err = ep.FAA(writers, ^uint64(0))
	return ok(t, err, "FAA") && good
}

// readLocked is a reader's critical section: no writer may be in.
func readLocked(t *testing.T, ep transport.Endpoint, readers, writers transport.GAddr) bool {
	if _, err := ep.FAA(readers, 1); !ok(t, err, "FAA") {
		return false
	}
	if w, good := readWord(t, ep, writers); good && w != 0 {
		t.Errorf("a reader got the lock while %d writers held it", w)
	}
	ep.Compute(100)
	_, err := ep.FAA(readers, ^uint64(0))
	return ok(t, err, "FAA")
}

// testGate has clients wait at a closed gate that a sleeping client opens:
// none may pass before the opener wakes, all must pass after, and a late
// client passes an open gate without parking.
func testGate(t *testing.T, s suite) {
	cfg := s.config()
	f := s.build(t, cfg)
	c := cfg.ComputeNodeIDs()[0]
	var gate transport.Gate
	const sleep, waiters = 50_000, 5
	var opened int64
	passed := make([]int64, waiters)
	f.Go(c, 0, func(ep transport.Endpoint) {
		ep.Sleep(sleep)
		opened = ep.Now()
		gate.Open()
	})
	for i := range waiters {
		f.Go(c, i%cfg.Threads, func(ep transport.Endpoint) {
			gate.Wait(ep)
			passed[i] = ep.Now()
		})
	}
	run(t, f)
	if opened < sleep {
		t.Errorf("Sleep(%d) returned at %d ns", sleep, opened)
	}
	for i, at := range passed {
		if at < opened {
			t.Errorf("waiter %d passed at %d ns, before the gate opened at %d ns", i, at, opened)
		}
	}
	f.Go(c, 1, func(ep transport.Endpoint) { gate.Wait(ep) })
	run(t, f)
}
