package local

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/internal/wordmem"
)

// Random streams: every endpoint draws from a PCG seeded with Config.Seed
// and a stream number made of its node, its thread and its index, so that
// the same program on the same config draws the same numbers. Setup and
// handler endpoints use thread numbers no client thread has.
const (
	setupThread   = 0xffff
	handlerThread = 0xfffe
)

func stream(n transport.NodeID, thread, index int) uint64 {
	return uint64(n)<<48 | uint64(uint16(thread))<<32 | uint64(uint32(index))
}

// endpoint is one client's, one RPC core's or one Setup caller's view of
// the fabric. Verbs execute synchronously in the caller's goroutine.
type endpoint struct {
	f      *Fabric
	node   transport.NodeID
	thread int
	rng    *rand.Rand
	tag    transport.Tag
	step   transport.Step
	wake   chan struct{} // Park/Unpark permit
	// stats is nil for Setup endpoints, which count nothing.
	stats *transport.VerbStats
}

// newEndpoint makes an endpoint on node n that reports thread and draws
// from random stream seq; counted endpoints keep stats.
func (f *Fabric) newEndpoint(n transport.NodeID, thread int, seq uint64, counted bool) *endpoint {
	ep := &endpoint{
		f:      f,
		node:   n,
		thread: thread,
		rng:    rand.New(rand.NewPCG(f.cfg.Seed, seq)),
		wake:   make(chan struct{}, 1),
	}
	if counted {
		ep.stats = &transport.VerbStats{}
	}
	return ep
}

// counts reports whether a verb to node n is counted: accesses to the
// endpoint's own node are local loads and stores, not verbs.
func (e *endpoint) counts(n transport.NodeID) bool {
	return e.stats != nil && n != e.node
}

// single counts one verb posted on its own, which rings one doorbell.
func (e *endpoint) single(n transport.NodeID, v transport.VerbKind, out, in uint64) {
	if e.counts(n) {
		e.stats.Count(e.tag, n, v, out, in)
		e.stats.Doorbells++
	}
}

func (e *endpoint) Read(dst []byte, src transport.GAddr) error {
	r, off, err := e.f.resolve(transport.VerbRead, src, uint64(len(dst)))
	if err != nil {
		return err
	}
	e.f.mem.Read(r, off, dst)
	e.single(src.Node(), transport.VerbRead, 0, uint64(len(dst)))
	return nil
}

func (e *endpoint) Write(dst transport.GAddr, src []byte) error {
	r, off, err := e.f.resolve(transport.VerbWrite, dst, uint64(len(src)))
	if err != nil {
		return err
	}
	e.f.mem.Write(r, off, src)
	e.single(dst.Node(), transport.VerbWrite, uint64(len(src)), 0)
	return nil
}

func (e *endpoint) CAS(a transport.GAddr, expect, swap uint64) (uint64, error) {
	return e.atomic(transport.CASOp(a, expect, swap))
}

func (e *endpoint) MaskedCAS(a transport.GAddr, expect, swap, cmpMask, swapMask uint64) (uint64, error) {
	return e.atomic(transport.MaskedCASOp(a, expect, swap, cmpMask, swapMask))
}

func (e *endpoint) FAA(a transport.GAddr, add uint64) (uint64, error) {
	return e.atomic(transport.FAAOp(a, add))
}

// atomic runs one atomic: 8 bytes of operand out, the 8-byte old value in.
func (e *endpoint) atomic(op transport.Op) (uint64, error) {
	r, off, err := e.f.resolve(op.Kind, op.Addr, 8)
	if err != nil {
		return 0, err
	}
	old := e.f.mem.Atomic(r, off, &op)
	e.single(op.Addr.Node(), op.Kind, 8, 8)
	return old, nil
}

// target is where a checked op of a batch lands.
type target struct {
	r   *wordmem.Region
	off uint64
}

// Post checks every op before running any, so a batch with a bad address
// or an op that cannot be posted has no effect; then it runs them in order.
func (e *endpoint) Post(ops ...transport.Op) error {
	var small [16]target
	ts := small[:0]
	for i := range ops {
		o := &ops[i]
		if o.Kind != transport.VerbRead && o.Kind != transport.VerbWrite && !o.Kind.Atomic() {
			return fmt.Errorf("local: post op %d of %d: a %s cannot be posted", i, len(ops), o.Kind)
		}
		r, off, err := e.f.resolve(o.Kind, o.Addr, o.Len())
		if err != nil {
			return fmt.Errorf("local: post op %d of %d: %w", i, len(ops), err)
		}
		ts = append(ts, target{r, off})
	}
	rang := false
	for i := range ops {
		o, t := &ops[i], ts[i]
		var out, in uint64
		switch o.Kind {
		case transport.VerbRead:
			e.f.mem.Read(t.r, t.off, o.Buf)
			in = uint64(len(o.Buf))
		case transport.VerbWrite:
			e.f.mem.Write(t.r, t.off, o.Buf)
			out = uint64(len(o.Buf))
		default:
			o.Old = e.f.mem.Atomic(t.r, t.off, o)
			out, in = 8, 8
		}
		if n := o.Addr.Node(); e.counts(n) {
			e.stats.Count(e.tag, n, o.Kind, out, in)
			rang = true
		}
	}
	if rang {
		e.stats.Doorbells++
	}
	return nil
}

// resolve finds the memory behind [a, a+n) for verb v, or the
// *transport.AddrError that says why there is none.
func (f *Fabric) resolve(v transport.VerbKind, a transport.GAddr, n uint64) (*wordmem.Region, uint64, error) {
	id := a.Node()
	if int(id) >= len(f.nodes) {
		return nil, 0, &transport.AddrError{Verb: v, Addr: a, Len: n,
			Reason: fmt.Sprintf("node %d does not exist (nodes are 0-%d)", id, len(f.nodes)-1)}
	}
	nd := f.nodes[id]
	i, err := nd.layout.Find(v, a, n)
	if err != nil {
		return nil, 0, err
	}
	if i >= len(nd.mem) {
		return nil, 0, fmt.Errorf("local: %s at %v: the fabric is closed", v, a)
	}
	return nd.mem[i], uint64(a - nd.layout.Regions[i].Base), nil
}

// Compute is a no-op: local work takes the real time it takes.
func (e *endpoint) Compute(int64) {}

// Now is wall-clock nanoseconds since the fabric was built.
func (e *endpoint) Now() int64 { return time.Since(e.f.start).Nanoseconds() }

func (e *endpoint) Node() transport.NodeID { return e.node }
func (e *endpoint) Thread() int            { return e.thread }
func (e *endpoint) Rand() *rand.Rand       { return e.rng }
func (e *endpoint) SetTag(t transport.Tag) { e.tag, e.step = t, 0 }
func (e *endpoint) Tag() transport.Tag     { return e.tag }

// SetStep only records the step: the time breakdown is measured by the
// simulator (TimeStats), where it costs no real time.
func (e *endpoint) SetStep(s transport.Step) { e.step = s }
func (e *endpoint) Step() transport.Step     { return e.step }

// Sleep sleeps for real.
func (e *endpoint) Sleep(ns int64) { time.Sleep(time.Duration(ns)) }

// Backoff yields the processor: a thread spinning on a lock would
// otherwise keep its holder from running when goroutines outnumber cores.
func (e *endpoint) Backoff(int64) { runtime.Gosched() }

// Park waits for the permit Unpark leaves.
func (e *endpoint) Park() { <-e.wake }

// Unpark leaves a permit for Park. The blocking primitives unpark an
// endpoint at most once per Park, so a second permit is never needed.
func (e *endpoint) Unpark() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}
