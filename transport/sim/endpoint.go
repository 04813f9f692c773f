package sim

import (
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"runtime/debug"

	"github.com/dmbench/dmbench/transport"
)

// errStopped unwinds a coroutine that the fabric abandoned.
var errStopped = errors.New("sim: coroutine stopped")

// endpoint is a client coroutine (or an RPC core) and its view of the
// fabric. Exactly one coroutine runs at a time: it runs until it issues a
// verb, computes, parks or finishes, and the event loop resumes it when its
// completion comes due.
type endpoint struct {
	// Hot: touched by every verb. Kept together, ahead of the 2 KB of
	// statistics, so a verb touches few cache lines of its endpoint.
	f       *Fabric
	node    *node
	thread  *thread
	ops     []transport.Op // the batch in flight
	pending int            // its ops not yet complete
	next    func() (struct{}, bool)
	yield   func(struct{}) bool
	id      uint32 // for the event hash: Go order for clients
	tag     transport.Tag
	step    transport.Step
	client  bool // counted in Fabric.live
	single  [1]transport.Op

	th       int
	rng      *rand.Rand
	body     func(transport.Endpoint)
	stop     func()
	panicked any
	stack    []byte
	rpc      rpcReq // the call in flight
	reply    []byte
	replyErr error
}

func (f *Fabric) newEndpoint(nd *node, th *thread, thIndex, id int) *endpoint {
	return &endpoint{
		f: f, node: nd, thread: th, th: thIndex, id: uint32(id), client: true,
		rng: rand.New(rand.NewPCG(f.cfg.Seed, uint64(nd.id)<<48|uint64(thIndex)<<32|uint64(id))),
	}
}

func (ep *endpoint) startCoroutine(body func(transport.Endpoint)) {
	ep.next, ep.stop = iter.Pull(func(yield func(struct{}) bool) {
		ep.yield = yield
		defer func() {
			if r := recover(); r != nil && r != errStopped { //nolint:errorlint // sentinel identity
				ep.panicked = r
				ep.stack = debug.Stack()
			}
		}()
		body(ep)
	})
}

// resume runs the coroutine until it suspends again or finishes.
func (ep *endpoint) resume() {
	if _, ok := ep.next(); ok {
		return
	}
	ep.next, ep.stop = nil, nil
	if ep.panicked != nil {
		ep.f.failure = errors.Join(ep.f.failure, fmt.Errorf("sim: client %d on node %d thread %d panicked: %v\n%s", ep.id, ep.node.id, ep.th, ep.panicked, ep.stack))
	}
	if ep.client {
		ep.f.live--
	}
}

// suspend hands control back to the event loop. Virtual time passes for
// an endpoint only while it is suspended, so this is where its time is
// attributed: to a, and to the step and tag in force.
func (ep *endpoint) suspend(a transport.Activity) {
	t0 := ep.f.now
	if !ep.yield(struct{}{}) {
		panic(errStopped)
	}
	if d := (ep.f.now - t0) / psPerNs; d > 0 {
		ts := &ep.thread.stats.Time
		tag := ep.tag % transport.MaxTags
		ts.Activity[tag][a] += d
		ts.Steps[tag][ep.step%transport.MaxSteps] += d
	}
}

func (ep *endpoint) stopCoroutine() {
	if ep.stop != nil {
		ep.stop()
		ep.next, ep.stop = nil, nil
	}
}

// The single verbs build their op in place: at 1,728 coroutines the
// simulator is bound by cache misses, and every copy of an Op counts.

func (ep *endpoint) Read(dst []byte, src transport.GAddr) error {
	op := &ep.single[0]
	*op = transport.Op{Kind: transport.VerbRead, Addr: src, Buf: dst}
	return ep.postSingle()
}

func (ep *endpoint) Write(dst transport.GAddr, src []byte) error {
	op := &ep.single[0]
	*op = transport.Op{Kind: transport.VerbWrite, Addr: dst, Buf: src}
	return ep.postSingle()
}

func (ep *endpoint) CAS(a transport.GAddr, expect, swap uint64) (uint64, error) {
	op := &ep.single[0]
	*op = transport.Op{Kind: transport.VerbCAS, Addr: a, Expect: expect, Swap: swap}
	err := ep.postSingle()
	return op.Old, err
}

func (ep *endpoint) MaskedCAS(a transport.GAddr, expect, swap, cmpMask, swapMask uint64) (uint64, error) {
	op := &ep.single[0]
	*op = transport.Op{Kind: transport.VerbMaskedCAS, Addr: a, Expect: expect, Swap: swap, CmpMask: cmpMask, SwapMask: swapMask}
	err := ep.postSingle()
	return op.Old, err
}

func (ep *endpoint) FAA(a transport.GAddr, add uint64) (uint64, error) {
	op := &ep.single[0]
	*op = transport.Op{Kind: transport.VerbFAA, Addr: a, Add: add}
	err := ep.postSingle()
	return op.Old, err
}

func (ep *endpoint) postSingle() error {
	err := ep.f.post(ep, ep.single[:])
	ep.single[0].Buf = nil // do not keep the caller's buffer alive
	return err
}

func (ep *endpoint) Post(ops ...transport.Op) error { return ep.f.post(ep, ops) }

func (ep *endpoint) Compute(ns int64) {
	if ns > 0 {
		ep.busy(ns * psPerNs)
	}
}

// busy occupies the endpoint's core for d ps and resumes when done.
func (ep *endpoint) busy(d int64) {
	end := ep.thread.cpu.serve(ep.f.now, d)
	ep.f.schedule(end, evResume, ep, 0)
	ep.suspend(transport.ActCompute)
}

// sleepUntil suspends without occupying the core.
func (ep *endpoint) sleepUntil(t int64) {
	ep.f.schedule(t, evResume, ep, 0)
	ep.suspend(transport.ActWait)
}

func (ep *endpoint) Sleep(ns int64) {
	if ns > 0 {
		ep.sleepUntil(ep.f.now + ns*psPerNs)
	}
}

// Backoff spins on the caller's core.
func (ep *endpoint) Backoff(ns int64) { ep.Compute(ns) }

func (ep *endpoint) Now() int64               { return ep.f.now / psPerNs }
func (ep *endpoint) Node() transport.NodeID   { return ep.node.id }
func (ep *endpoint) Thread() int              { return ep.th }
func (ep *endpoint) Rand() *rand.Rand         { return ep.rng }
func (ep *endpoint) SetTag(t transport.Tag)   { ep.tag, ep.step = t, 0 }
func (ep *endpoint) Tag() transport.Tag       { return ep.tag }
func (ep *endpoint) SetStep(s transport.Step) { ep.step = s }
func (ep *endpoint) Step() transport.Step     { return ep.step }
func (ep *endpoint) Park()                    { ep.suspend(transport.ActWait) }
func (ep *endpoint) Unpark()                  { ep.f.schedule(ep.f.now, evResume, ep, 0) }
func (ep *endpoint) String() string {
	return fmt.Sprintf("client %d (node %d thread %d)", ep.id, ep.node.id, ep.th)
}
func (ep *endpoint) count(op *transport.Op) { countOp(&ep.thread.stats, ep.tag, op) }
func (ep *endpoint) countRPC(n transport.NodeID, out, in int) {
	ep.thread.stats.Count(ep.tag, n, transport.VerbRPC, uint64(out), uint64(in))
}

// countOp records one verb's payload: READ returns its length, WRITE sends
// it, atomics send an 8-byte operand and return the 8-byte old value.
func countOp(s *transport.VerbStats, t transport.Tag, op *transport.Op) {
	var out, in uint64
	switch {
	case op.Kind == transport.VerbRead:
		in = op.Len()
	case op.Kind == transport.VerbWrite:
		out = op.Len()
	default:
		out, in = 8, 8
	}
	s.Count(t, op.Addr.Node(), op.Kind, out, in)
}
