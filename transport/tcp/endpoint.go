package tcp

import (
	"fmt"
	"slices"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/internal/realtime"
)

// maxVerbBytes is the largest READ or WRITE sent as one op: a longer one
// goes as several, one after the other, so that no frame exceeds MaxFrame.
const maxVerbBytes = MaxFrame / 4

// endpoint is one client's, one RPC core's or one Setup caller's view of
// the fabric. Verbs to the endpoint's own node, when its server runs in
// this process, are local memory accesses; others travel to the target
// node's server and the caller waits for the reply.
type endpoint struct {
	realtime.Endpoint
	peers []*peer // by node id; nil for a server started on its own
	self  *Server // the server of the endpoint's node in this process, or nil
	// floating: the endpoint of a server started on its own takes the
	// node id its server is configured with. It counts nothing, so its
	// verbs count alike whatever node it takes.
	floating bool
	conn     int     // which of a peer's connections this endpoint uses
	calls    []*call // one per node of a batch in flight, reused
}

// local is the memory of node n when it is the endpoint's own node served
// in this process, else nil.
func (e *endpoint) local(n transport.NodeID) *nodeMem {
	if e.self == nil || n != e.Node() {
		return nil
	}
	return e.self.mem()
}

// peer returns the server of node n, checking [a, a+size) for verb v
// against the node's layout as the server will.
func (e *endpoint) peer(v transport.VerbKind, a transport.GAddr, size uint64) (*peer, error) {
	n := a.Node()
	if int(n) >= len(e.peers) {
		if e.peers == nil {
			return nil, fmt.Errorf("tcp: %s at %v: a memory node started on its own reaches no other node", v, a)
		}
		return nil, &transport.AddrError{Verb: v, Addr: a, Len: size,
			Reason: fmt.Sprintf("node %d does not exist (nodes are 0-%d)", n, len(e.peers)-1)}
	}
	p := e.peers[n]
	if _, err := p.layout.Load().Find(v, a, size); err != nil {
		return nil, err
	}
	return p, nil
}

func (e *endpoint) Read(dst []byte, src transport.GAddr) error {
	op := transport.ReadOp(dst, src)
	if err := e.one(&op); err != nil {
		return err
	}
	e.CountVerb(src.Node(), transport.VerbRead, 0, uint64(len(dst)))
	return nil
}

func (e *endpoint) Write(dst transport.GAddr, src []byte) error {
	op := transport.WriteOp(dst, src)
	if err := e.one(&op); err != nil {
		return err
	}
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
	if err := e.one(&op); err != nil {
		return 0, err
	}
	e.CountVerb(op.Addr.Node(), op.Kind, 8, 8)
	return op.Old, nil
}

// one runs a single verb: on the endpoint's own memory, or as a batch of
// one (of several, for a READ or WRITE longer than maxVerbBytes) to the
// target's server.
func (e *endpoint) one(op *transport.Op) error {
	n := op.Addr.Node()
	if g := e.local(n); g != nil {
		one := [1]transport.Op{*op}
		err := g.post(one[:])
		op.Old = one[0].Old
		return err
	}
	p, err := e.peer(op.Kind, op.Addr, op.Len())
	if err != nil {
		return err
	}
	c := p.conn(e.conn)
	cl := e.call(0)
	for rest := *op; ; {
		piece := rest
		if !piece.Kind.Atomic() && len(piece.Buf) > maxVerbBytes {
			piece.Buf = piece.Buf[:maxVerbBytes]
		}
		cl.ops = append(cl.ops[:0], piece)
		if err := c.roundTrip(cl, func(b []byte, id uint64) []byte { return appendBatch(b, id, cl.ops) }); err != nil {
			return err
		}
		op.Old = cl.ops[0].Old
		if piece.Kind.Atomic() || len(piece.Buf) == len(rest.Buf) {
			return nil
		}
		rest.Buf, rest.Addr = rest.Buf[len(piece.Buf):], rest.Addr.Add(uint64(len(piece.Buf)))
	}
}

// call returns the endpoint's i-th reusable call.
func (e *endpoint) call(i int) *call {
	for len(e.calls) <= i {
		e.calls = append(e.calls, newCall())
	}
	return e.calls[i]
}

// Post checks every op before running any, so a batch with a bad address
// or an op that cannot be posted has no effect; then it sends the ops of
// each node as one frame, all frames at once, and waits for every reply.
// Ops run in order on each node, as on the QPs of a real doorbell.
func (e *endpoint) Post(ops ...transport.Op) error {
	for i := range ops {
		o := &ops[i]
		if o.Kind != transport.VerbRead && o.Kind != transport.VerbWrite && !o.Kind.Atomic() {
			return fmt.Errorf("tcp: post op %d of %d: a %s cannot be posted", i, len(ops), o.Kind)
		}
		if g := e.local(o.Addr.Node()); g != nil {
			if _, err := g.view.Load().resolve(o.Kind, o.Addr, o.Len()); err != nil {
				return fmt.Errorf("tcp: post op %d of %d: %w", i, len(ops), err)
			}
			continue
		}
		if _, err := e.peer(o.Kind, o.Addr, o.Len()); err != nil {
			return fmt.Errorf("tcp: post op %d of %d: %w", i, len(ops), err)
		}
	}
	if err := e.postChecked(ops); err != nil {
		return err
	}
	e.CountPost(ops)
	return nil
}

// postChecked runs checked ops: one frame per target node, sent together.
func (e *endpoint) postChecked(ops []transport.Op) error {
	var nodes []transport.NodeID
	for i := range ops {
		if n := ops[i].Addr.Node(); !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	type group struct {
		cl   *call
		idx  []int // positions in ops, when the batch spans nodes
		sent bool
	}
	groups := make([]group, len(nodes))
	for gi, n := range nodes {
		g := &groups[gi]
		g.cl = e.call(gi)
		g.cl.ops = g.cl.ops[:0]
		for i := range ops {
			if ops[i].Addr.Node() == n {
				g.cl.ops = append(g.cl.ops, ops[i])
				g.idx = append(g.idx, i)
			}
		}
		if batchRequestBytes(g.cl.ops) > MaxFrame {
			return fmt.Errorf("tcp: post of %d ops to node %d: the batch takes %d bytes, more than the %d-byte frame limit", len(g.cl.ops), n, batchRequestBytes(g.cl.ops), MaxFrame)
		}
	}
	var first error
	for gi, n := range nodes {
		g := &groups[gi]
		if mem := e.local(n); mem != nil {
			first = mem.post(g.cl.ops)
			continue
		}
		p := e.peers[n]
		if err := p.conn(e.conn).start(g.cl, func(b []byte, id uint64) []byte { return appendBatch(b, id, g.cl.ops) }); err != nil {
			first = err
			break
		}
		g.sent = true
	}
	for gi := range groups {
		g := &groups[gi]
		if g.sent {
			if err := g.cl.wait(); err != nil && first == nil {
				first = fmt.Errorf("tcp: post to node %d: %w", nodes[gi], err)
			}
		}
		for j, i := range g.idx {
			ops[i].Old = g.cl.ops[j].Old
		}
	}
	return first
}

// Node is the endpoint's node; a floating endpoint's is its server's.
func (e *endpoint) Node() transport.NodeID {
	if e.floating {
		if g := e.self.mem(); g != nil {
			return g.node
		}
	}
	return e.Endpoint.Node()
}
