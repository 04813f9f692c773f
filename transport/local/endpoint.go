package local

import (
	"fmt"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/internal/realtime"
	"github.com/dmbench/dmbench/transport/internal/wordmem"
)

// endpoint is one client's, one RPC core's or one Setup caller's view of
// the fabric. Verbs execute synchronously in the caller's goroutine.
type endpoint struct {
	realtime.Endpoint
	f *Fabric
}

// newEndpoint makes an endpoint on node n that reports thread and draws
// from random stream seq; counted endpoints keep stats.
func (f *Fabric) newEndpoint(n transport.NodeID, thread int, seq uint64, counted bool) *endpoint {
	return &endpoint{Endpoint: realtime.NewEndpoint(n, thread, f.cfg.Seed, seq, f.start, counted), f: f}
}

func (e *endpoint) Read(dst []byte, src transport.GAddr) error {
	t, err := e.f.resolve(transport.VerbRead, src, uint64(len(dst)))
	if err != nil {
		return err
	}
	e.f.mem.Read(t.Region, t.Off, dst)
	e.CountVerb(src.Node(), transport.VerbRead, 0, uint64(len(dst)))
	return nil
}

func (e *endpoint) Write(dst transport.GAddr, src []byte) error {
	t, err := e.f.resolve(transport.VerbWrite, dst, uint64(len(src)))
	if err != nil {
		return err
	}
	e.f.mem.Write(t.Region, t.Off, src)
	e.CountVerb(dst.Node(), transport.VerbWrite, uint64(len(src)), 0)
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
	t, err := e.f.resolve(op.Kind, op.Addr, 8)
	if err != nil {
		return 0, err
	}
	old := e.f.mem.Atomic(t.Region, t.Off, &op)
	e.CountVerb(op.Addr.Node(), op.Kind, 8, 8)
	return old, nil
}

// Post checks every op before running any, so a batch with a bad address
// or an op that cannot be posted has no effect; then it runs them in order.
func (e *endpoint) Post(ops ...transport.Op) error {
	var small [16]wordmem.Target
	ts := small[:0]
	for i := range ops {
		o := &ops[i]
		if o.Kind != transport.VerbRead && o.Kind != transport.VerbWrite && !o.Kind.Atomic() {
			return fmt.Errorf("local: post op %d of %d: a %s cannot be posted", i, len(ops), o.Kind)
		}
		t, err := e.f.resolve(o.Kind, o.Addr, o.Len())
		if err != nil {
			return fmt.Errorf("local: post op %d of %d: %w", i, len(ops), err)
		}
		ts = append(ts, t)
	}
	for i := range ops {
		e.f.mem.Exec(ts[i], &ops[i], ops[i].Buf)
	}
	e.CountPost(ops)
	return nil
}

// resolve finds the memory behind [a, a+n) for verb v, or the
// *transport.AddrError that says why there is none.
func (f *Fabric) resolve(v transport.VerbKind, a transport.GAddr, n uint64) (wordmem.Target, error) {
	id := a.Node()
	if int(id) >= len(f.nodes) {
		return wordmem.Target{}, &transport.AddrError{Verb: v, Addr: a, Len: n,
			Reason: fmt.Sprintf("node %d does not exist (nodes are 0-%d)", id, len(f.nodes)-1)}
	}
	nd := f.nodes[id]
	i, err := nd.layout.Find(v, a, n)
	if err != nil {
		return wordmem.Target{}, err
	}
	if i >= len(nd.mem) {
		return wordmem.Target{}, fmt.Errorf("local: %s at %v: the fabric is closed", v, a)
	}
	return wordmem.Target{Region: nd.mem[i], Off: uint64(a - nd.layout.Regions[i].Base)}, nil
}
