// Package realtime is what the real-time fabrics (local, tcp) share above
// their memory (wordmem): the part of an endpoint that does not depend on
// how a verb reaches memory (random stream, tag and step, Park permit,
// wall-clock time, and how its verbs count), and the running of clients
// (Go, Run, Attach, Stats). Both fabrics run their clients as goroutines
// of this process in real time, and a run must draw the same numbers and
// count the same verbs per operation on either, so one copy serves both;
// what differs (where a verb's memory is, which nodes this process hosts)
// stays in each fabric.
package realtime

import (
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/dmbench/dmbench/transport"
)

// Random streams: every endpoint draws from a PCG seeded with
// Config.Seed and a stream number made of its node, its thread and its
// index, so that the same program on the same config draws the same
// numbers on every real-time fabric. Setup and handler endpoints use
// thread numbers no client thread has.
const (
	SetupThread   = 0xffff
	HandlerThread = 0xfffe
)

// Stream is the random stream of the index-th endpoint made on thread of
// node n.
func Stream(n transport.NodeID, thread, index int) uint64 {
	return uint64(n)<<48 | uint64(uint16(thread))<<32 | uint64(uint32(index))
}

// Endpoint is the fabric-independent state of one client's, one RPC
// core's or one Setup caller's endpoint. A fabric's endpoint embeds it and
// adds the verbs; it is not safe for concurrent use, as endpoints are not.
type Endpoint struct {
	node   transport.NodeID
	thread int
	start  time.Time // Now's zero: when the fabric was built
	rng    *rand.Rand
	tag    transport.Tag
	step   transport.Step
	wake   chan struct{} // Park/Unpark permit
	// stats is nil for Setup endpoints, which count nothing.
	stats *transport.VerbStats
}

// NewEndpoint is an endpoint on node n that reports thread, draws from
// stream seq of seed and measures Now from start; counted endpoints keep
// verb counters.
func NewEndpoint(n transport.NodeID, thread int, seed, seq uint64, start time.Time, counted bool) Endpoint {
	e := Endpoint{
		node:   n,
		thread: thread,
		start:  start,
		rng:    rand.New(rand.NewPCG(seed, seq)),
		wake:   make(chan struct{}, 1),
	}
	if counted {
		e.stats = &transport.VerbStats{}
	}
	return e
}

// FabricEndpoint is a fabric's endpoint: its verbs over the Endpoint it
// embeds, which gives it the unexported method.
type FabricEndpoint interface {
	transport.Endpoint
	base() *Endpoint
}

func (e *Endpoint) base() *Endpoint { return e }

// Counted reports whether the endpoint counts its verbs: Setup endpoints
// do not.
func (e *Endpoint) Counted() bool { return e.stats != nil }

// counts reports whether a verb to node n is counted: accesses to the
// endpoint's own node are local loads and stores, not verbs.
func (e *Endpoint) counts(n transport.NodeID) bool {
	return e.stats != nil && n != e.node
}

// CountVerb counts one verb to node n posted on its own, which rings one
// doorbell: out payload bytes sent, in received.
func (e *Endpoint) CountVerb(n transport.NodeID, v transport.VerbKind, out, in uint64) {
	if e.counts(n) {
		e.stats.Count(e.tag, n, v, out, in)
		e.stats.Doorbells++
	}
}

// CountPost counts a batch that ran: each op to another node, and one
// doorbell when there was any.
func (e *Endpoint) CountPost(ops []transport.Op) {
	rang := false
	for i := range ops {
		o := &ops[i]
		if n := o.Addr.Node(); e.counts(n) {
			out, in := Payload(o)
			e.stats.Count(e.tag, n, o.Kind, out, in)
			rang = true
		}
	}
	if rang {
		e.stats.Doorbells++
	}
}

// Payload is the bytes op o moves each way, as every fabric counts them:
// a READ's data in, a WRITE's out, an atomic's 8-byte operand out and
// 8-byte old value in.
func Payload(o *transport.Op) (out, in uint64) {
	switch o.Kind {
	case transport.VerbRead:
		return 0, uint64(len(o.Buf))
	case transport.VerbWrite:
		return uint64(len(o.Buf)), 0
	default:
		return 8, 8
	}
}

// Compute is a no-op: local work takes the real time it takes.
func (e *Endpoint) Compute(int64) {}

// Now is wall-clock nanoseconds since the fabric was built.
func (e *Endpoint) Now() int64 { return time.Since(e.start).Nanoseconds() }

func (e *Endpoint) Node() transport.NodeID { return e.node }
func (e *Endpoint) Thread() int            { return e.thread }
func (e *Endpoint) Rand() *rand.Rand       { return e.rng }
func (e *Endpoint) SetTag(t transport.Tag) { e.tag, e.step = t, 0 }
func (e *Endpoint) Tag() transport.Tag     { return e.tag }

// SetStep only records the step: the time breakdown is measured by the
// simulator (TimeStats), where it costs no real time.
func (e *Endpoint) SetStep(s transport.Step) { e.step = s }
func (e *Endpoint) Step() transport.Step     { return e.step }

// Sleep sleeps for real.
func (e *Endpoint) Sleep(ns int64) { time.Sleep(time.Duration(ns)) }

// Backoff yields the processor: a thread spinning on a lock would
// otherwise keep its holder from running when goroutines outnumber cores.
func (e *Endpoint) Backoff(int64) { runtime.Gosched() }

// Park waits for the permit Unpark leaves.
func (e *Endpoint) Park() { <-e.wake }

// Unpark leaves a permit for Park. The blocking primitives unpark an
// endpoint at most once per Park, so a second permit is never needed.
func (e *Endpoint) Unpark() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}
