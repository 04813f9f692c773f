package indextest

import (
	"fmt"
	"time"

	"github.com/dmbench/dmbench/transport"
)

// Livelock bounds: a client whose body is still issuing verbs (or
// charging local work) this long after it started is taken to be looping
// forever (retrying a torn read that never heals, spinning on a lock
// nobody releases) and is stopped by a panic at its next verb, so the run
// fails with that client's stack. The longest client body of any case
// takes about 0.1 s of virtual time (the sequential case, on the tree
// indexes so far) and a few wall seconds under the race detector. A
// client blocked for good in Park issues no verb: the simulator reports
// that deadlock itself, and Instance.Run's RunTimeout catches it on local.
const (
	SimClientLimit   = 2 * time.Second  // virtual
	LocalClientLimit = 60 * time.Second // wall
)

// guard is the endpoint GoAll hands to a client: the fabric's, with the
// livelock bound checked at every verb.
type guard struct {
	transport.Endpoint
	sim      bool
	deadline int64 // ns: virtual on sim, wall (UnixNano) on local
}

func newGuard(ep transport.Endpoint, sim bool) *guard {
	g := &guard{Endpoint: ep, sim: sim}
	if sim {
		g.deadline = ep.Now() + int64(SimClientLimit)
	} else {
		g.deadline = time.Now().Add(LocalClientLimit).UnixNano()
	}
	return g
}

func (g *guard) check() {
	now, limit := time.Now().UnixNano(), LocalClientLimit
	if g.sim {
		now, limit = g.Endpoint.Now(), SimClientLimit
	}
	if now > g.deadline {
		panic(fmt.Sprintf("indextest: client on node %d thread %d still issuing verbs %v after it started: a livelock", g.Node(), g.Thread(), limit))
	}
}

func (g *guard) Read(dst []byte, src transport.GAddr) error {
	g.check()
	return g.Endpoint.Read(dst, src)
}

func (g *guard) Write(dst transport.GAddr, src []byte) error {
	g.check()
	return g.Endpoint.Write(dst, src)
}

func (g *guard) CAS(a transport.GAddr, expect, swap uint64) (uint64, error) {
	g.check()
	return g.Endpoint.CAS(a, expect, swap)
}

func (g *guard) MaskedCAS(a transport.GAddr, expect, swap, cmpMask, swapMask uint64) (uint64, error) {
	g.check()
	return g.Endpoint.MaskedCAS(a, expect, swap, cmpMask, swapMask)
}

func (g *guard) FAA(a transport.GAddr, add uint64) (uint64, error) {
	g.check()
	return g.Endpoint.FAA(a, add)
}

func (g *guard) Post(ops ...transport.Op) error {
	g.check()
	return g.Endpoint.Post(ops...)
}

func (g *guard) Call(n transport.NodeID, method uint16, req []byte) ([]byte, error) {
	g.check()
	return g.Endpoint.Call(n, method, req)
}

func (g *guard) Compute(ns int64) {
	g.check()
	g.Endpoint.Compute(ns)
}
