package sim

import (
	"fmt"

	"github.com/dmbench/dmbench/transport"
)

// A verb's path, each stage a FIFO resource or a fixed latency:
//
//	requester core   PostNs per doorbell
//	requester NIC    one message (1/MsgRate), NICTxNs
//	requester link   request bytes (headers + WRITE payload) at LineRate
//	wire             WireNs
//	---- the arrival event at the responder ----
//	responder link   request bytes
//	responder NIC    one message, NICRxNs, MemReadNs for READ and atomics
//	atomic units     per address (1/AtomicRateHost or Device), per NIC
//	memory effect    READ, WRITE: applied now, in arrival order; an
//	                 atomic: when its address's atomic unit executes it
//	                 (the execute event), so a queue of atomics on one
//	                 word delays their effects, not only their replies
//	responder link   response bytes (headers + READ payload)
//	wire             WireNs
//	requester link   response bytes, NICCompNs
//	---- the completion event at the requester ----
//
// Requester-side resources are reserved at issue, responder-side ones at
// the arrival event, and the response's trip back (responder send link,
// requester receive link) at the arrival event too, ahead of time (at the
// execute event for an atomic). A responder executes one QP's requests in
// order (InfiniBand Architecture Specification vol. 1, 9.5: responses
// return in request order), so an op arriving behind an atomic of its QP
// that has not executed yet waits for it. NIC
// resources are timelines (timeline.go): a booking ahead leaves the gap
// before it to requests that come first, as the real link would.

// post issues a doorbell batch for ep and suspends it until every op has
// completed. Verbs to ep's own node are local memory accesses: applied at
// once and charged to the core, with no NIC involved.
func (f *Fabric) post(ep *endpoint, ops []transport.Op) error {
	if len(ops) == 0 {
		return nil
	}
	remote := false
	for i := range ops {
		m, err := f.locate(&ops[i])
		if err != nil {
			return err
		}
		if ops[i].Addr.Node() != ep.node.id {
			remote = true
			// The op reaches memory about a microsecond of virtual
			// time from now, thousands of verbs later: start the likely
			// DRAM miss on its target now, so that by then the line is
			// in the cache.
			if len(m.mem) > 0 { // a zero-length op may end its region
				prefetch(&m.mem[0])
			}
		}
	}
	t := f.now
	if remote { // local accesses need no doorbell
		ep.thread.stats.Doorbells++
		t = ep.thread.cpu.serve(t, f.postCost)
	}
	ep.ops = ops
	ep.pending = 0
	var local int64
	act := transport.ActCompute // a batch of local accesses only
	for i := range ops {
		op := &ops[i]
		if op.Addr.Node() == ep.node.id {
			local += f.applyLocal(f.land(op).mem, op)
			continue
		}
		ep.count(op)
		ep.pending++
		f.issue(ep, int32(i), t)
		act = strongest(act, op.Kind)
	}
	if local > 0 {
		t = ep.thread.cpu.serve(t, local)
	}
	if ep.pending == 0 {
		f.schedule(t, evResume, ep, 0)
	}
	ep.suspend(act)
	ep.ops = nil
	return nil
}

// memRef is where an op lands: its region's bytes from the op's address
// on, and whether the region is on-chip device memory.
type memRef struct {
	mem    []byte
	device bool
}

// locate validates op's address and finds where it lands.
func (f *Fabric) locate(op *transport.Op) (memRef, error) {
	n := op.Addr.Node()
	if int(n) >= len(f.nodes) {
		return memRef{}, &transport.AddrError{Verb: op.Kind, Addr: op.Addr, Len: op.Len(),
			Reason: fmt.Sprintf("node %d does not exist (nodes are 0-%d)", n, len(f.nodes)-1)}
	}
	nd := f.nodes[n]
	i, err := nd.layout.Find(op.Kind, op.Addr, op.Len())
	if err != nil {
		return memRef{}, err
	}
	r := &nd.layout.Regions[i]
	return memRef{mem: nd.mem[i][op.Addr-r.Base:], device: r.Device}, nil
}

// land is where op, which post has validated, lands. It is found again
// when op takes effect rather than kept from post: looking the address up
// in its node's few regions costs less than a cache miss on a kept copy,
// which the verbs in between have evicted.
func (f *Fabric) land(op *transport.Op) memRef {
	m, _ := f.locate(op)
	return m
}

func isReadOrAtomic(k transport.VerbKind) bool { return k != transport.VerbWrite }

// issue hands op idx of ep's batch to its QP at time t, or queues it
// behind the QP's earlier ops when READ/atomic slots are exhausted.
func (f *Fabric) issue(ep *endpoint, idx int32, t int64) {
	op := &ep.ops[idx]
	q := &ep.thread.qps[op.Addr.Node()]
	ra := isReadOrAtomic(op.Kind)
	if q.waiting.len() > 0 || ra && q.outstanding >= f.prof.MaxOutstanding {
		q.waiting.push(opRef{ep, idx, op.Kind})
		return
	}
	if ra {
		q.outstanding++
	}
	f.send(ep, idx, op.Kind, t)
}

// send runs the requester side of op idx, of kind k, from time t.
func (f *Fabric) send(ep *endpoint, idx int32, k transport.VerbKind, t int64) {
	req := ep.node
	t = req.nic.serve(f.now, t, f.msgSvc) + f.nicTx
	req.stats.Msgs++
	b := f.requestBytes(k, &ep.ops[idx])
	req.stats.BytesTx += b
	t = req.tx.serve(f.now, t, int64(b)*f.byteSvc) + f.wire
	f.schedule(t, evArrive, ep, idx)
}

// arrive runs the responder side of op idx and schedules its completion.
func (f *Fabric) arrive(ep *endpoint, idx int32) {
	op := &ep.ops[idx]
	resp := f.nodes[op.Addr.Node()]
	q := &ep.thread.qps[resp.id]
	if q.executing > f.now { // behind an atomic of its QP
		f.schedule(q.executing, evArrive, ep, idx)
		return
	}
	f.flushTorn(q) // ops on one QP take effect in order

	in := f.requestBytes(op.Kind, op)
	resp.stats.BytesRx += in
	ser := int64(in) * f.byteSvc
	t := resp.rx.serve(f.now, f.now-ser, ser)
	t = resp.nic.serve(f.now, t, f.msgSvc) + f.nicRx
	resp.stats.Msgs++
	m := f.land(op)
	mem := m.mem
	switch op.Kind {
	case transport.VerbRead:
		t += f.memRead
		copy(op.Buf, mem)
	case transport.VerbWrite:
		if done := f.write(q, mem, op); done > t {
			t = done
		}
	default:
		t += f.memRead
		svc := f.atomicHost
		if m.device {
			svc = f.atomicDevice
		}
		t = f.serveAddr(resp, op.Addr, t, svc)
		if f.atomicNode > 0 {
			t = resp.atomics.serve(f.now, t, f.atomicNode)
		}
		q.executing = t
		f.schedule(t, evExecute, ep, idx)
		return
	}
	f.respond(resp, ep, idx, t)
}

// execute applies atomic op idx of ep when its address's atomic unit
// runs it, and sends its reply.
func (f *Fabric) execute(ep *endpoint, idx int32) {
	applyAtomic(f.land(&ep.ops[idx]).mem, &ep.ops[idx])
	f.respond(f.nodes[ep.ops[idx].Addr.Node()], ep, idx, f.now)
}

// respond sends op idx's response from resp at time t and schedules its
// completion at the requester.
func (f *Fabric) respond(resp *node, ep *endpoint, idx int32, t int64) {
	op := &ep.ops[idx]
	out := f.responseBytes(op)
	resp.stats.BytesTx += out
	ser := int64(out) * f.byteSvc
	t = resp.tx.serve(f.now, t, ser) + f.wire
	req := ep.node
	req.stats.BytesRx += out
	t = req.rx.serve(f.now, t-ser, ser) + f.nicComp
	f.events.push(completion(t, ep, idx, op))
}

// serveAddr serialises atomics on one 8-byte address.
func (f *Fabric) serveAddr(nd *node, a transport.GAddr, at, svc int64) int64 {
	end := max(at, nd.perAddr[a]) + svc
	nd.perAddr[a] = end
	if len(nd.perAddr) > 1<<14 {
		for k, v := range nd.perAddr {
			if v <= f.now {
				delete(nd.perAddr, k)
			}
		}
	}
	return end
}

// complete retires op idx at its requester, a READ or atomic (ra) or not,
// to node: it frees the QP slot, starts ops waiting for one, and resumes
// ep when its whole batch is done.
func (f *Fabric) complete(ep *endpoint, idx int32, ra bool, node transport.NodeID) {
	if ra {
		q := &ep.thread.qps[node]
		q.outstanding--
		for q.waiting.len() > 0 {
			w := q.waiting.peek()
			ra := isReadOrAtomic(w.kind)
			if ra && q.outstanding >= f.prof.MaxOutstanding {
				break
			}
			q.waiting.pop()
			if ra {
				q.outstanding++
			}
			f.send(w.ep, w.idx, w.kind, f.now)
		}
	}
	ep.pending--
	if ep.pending == 0 {
		ep.resume()
	}
}

// packets is the number of MTU-sized packets carrying n payload bytes.
func (f *Fabric) packets(n int) uint64 {
	if n <= f.prof.MTU {
		return 1
	}
	return uint64((n + f.prof.MTU - 1) / f.prof.MTU)
}

// requestBytes is what a verb's request, op of kind k, puts on the wire.
// Only a WRITE's is read from op (its length).
func (f *Fabric) requestBytes(k transport.VerbKind, op *transport.Op) uint64 {
	p := &f.prof
	switch k {
	case transport.VerbRead:
		return uint64(p.BaseHeader + p.RETH)
	case transport.VerbWrite:
		return f.packets(len(op.Buf))*uint64(p.BaseHeader) + uint64(p.RETH+len(op.Buf))
	default:
		return uint64(p.BaseHeader + p.AtomicETH)
	}
}

// responseBytes is what a verb's response (or acknowledgement) carries.
func (f *Fabric) responseBytes(op *transport.Op) uint64 {
	p := &f.prof
	switch op.Kind {
	case transport.VerbRead:
		return f.packets(len(op.Buf))*uint64(p.BaseHeader) + uint64(p.AETH+len(op.Buf))
	case transport.VerbWrite:
		return uint64(p.BaseHeader + p.AETH)
	default:
		return uint64(p.BaseHeader + p.AETH + p.AtomicAckETH)
	}
}

// sendBytes is what a two-sided SEND of n bytes puts on the wire.
func (f *Fabric) sendBytes(n int) uint64 {
	return f.packets(n)*uint64(f.prof.BaseHeader) + uint64(n)
}

// strongest is the activity a batch waiting for a and a verb of kind k
// counts as: atomic over WRITE over READ.
func strongest(a transport.Activity, k transport.VerbKind) transport.Activity {
	switch {
	case k.Atomic():
		return transport.ActAtomic
	case k == transport.VerbWrite && a != transport.ActAtomic:
		return transport.ActWrite
	case a == transport.ActCompute:
		return transport.ActRead
	}
	return a
}
