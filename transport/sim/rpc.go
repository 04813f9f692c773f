package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/dmbench/dmbench/transport"
)

// Two-sided RPC. A request is a SEND: the requester's core posts it, its
// NIC and link carry it, the server's NIC takes it in and it joins the
// node's request queue. Each of the node's cores is a coroutine that takes
// requests in arrival order, pays RecvNs, runs the handler (whose Compute
// and verbs occupy that core) and SENDs the reply back, paying PostNs. An
// overloaded node therefore queues requests in virtual time. The reply is
// a receive at the requester too: its core pays RecvNs to take it (poll
// the receive queue, repost the buffer) before the caller goes on, so
// both sides pay a post and a receive per call.

// rpcReq is one request in flight.
type rpcReq struct {
	from    *endpoint
	target  *node
	method  uint16
	handler transport.Handler
	req     []byte
	ready   int64 // when the server NIC has handed it to memory
}

func (ep *endpoint) Call(n transport.NodeID, method uint16, req []byte) ([]byte, error) {
	f := ep.f
	nd, err := f.node(n)
	if err != nil {
		return nil, fmt.Errorf("sim: RPC %d: %w", method, err)
	}
	h, ok := nd.handlers[method]
	if !ok {
		return nil, fmt.Errorf("sim: RPC %d to node %d: no handler registered for that method", method, n)
	}
	ep.thread.stats.Doorbells++
	t := ep.thread.cpu.serve(f.now, f.postCost)
	if nd != ep.node {
		src := ep.node
		t = src.nic.serve(f.now, t, f.msgSvc) + f.nicTx
		src.stats.Msgs++
		b := f.sendBytes(len(req))
		src.stats.BytesTx += b
		t = src.tx.serve(f.now, t, int64(b)*f.byteSvc) + f.wire
	}
	ep.rpc = rpcReq{from: ep, target: nd, method: method, handler: h, req: req}
	f.schedule(t, evRPC, ep, 0)
	ep.suspend(transport.ActRPC)
	ep.busy(f.recv)
	reply, rerr := ep.reply, ep.replyErr
	ep.reply, ep.replyErr, ep.rpc = nil, nil, rpcReq{}
	ep.countRPC(n, len(req), len(reply))
	if rerr != nil {
		return nil, fmt.Errorf("sim: RPC %d on node %d: %w", method, n, rerr)
	}
	return reply, nil
}

// rpcArrive queues a request at its server and wakes an idle core.
func (f *Fabric) rpcArrive(ep *endpoint) {
	r := &ep.rpc
	nd := r.target
	t := f.now
	if nd != ep.node {
		b := f.sendBytes(len(r.req))
		nd.stats.BytesRx += b
		ser := int64(b) * f.byteSvc
		t = nd.rx.serve(f.now, t-ser, ser)
		t = nd.nic.serve(f.now, t, f.msgSvc) + f.nicRx
		nd.stats.Msgs++
	}
	r.ready = t
	nd.stats.RPCs++
	nd.queue.push(r)
	if nd.idle.len() > 0 {
		f.schedule(f.now, evResume, nd.idle.pop(), 0)
	}
}

// startCores starts the RPC cores of every node that serves a method.
func (f *Fabric) startCores() {
	for _, nd := range f.nodes {
		if len(nd.handlers) == 0 || len(nd.cores) > 0 {
			continue
		}
		for i := range f.cfg.Cores(nd.id) {
			id := 1<<31 | uint32(nd.id)<<12 | uint32(i)
			c := &endpoint{
				f: f, node: nd, thread: f.newThread(), th: i, id: id,
				rng: rand.New(rand.NewPCG(f.cfg.Seed, uint64(id))),
			}
			c.startCoroutine(func(transport.Endpoint) { f.serve(c) })
			nd.cores = append(nd.cores, c)
			f.schedule(f.now, evResume, c, 0)
		}
	}
}

// serve is the loop of one RPC core.
func (f *Fabric) serve(c *endpoint) {
	nd := c.node
	for {
		if nd.queue.len() == 0 {
			nd.idle.push(c)
			c.suspend(transport.ActWait)
			continue
		}
		r := nd.queue.pop()
		if r.ready > f.now {
			c.sleepUntil(r.ready)
		}
		c.busy(f.recv)
		c.tag = r.from.tag
		reply, err := r.handler(c, r.req)
		f.sendReply(c, r, reply, err)
	}
}

// sendReply SENDs a handler's reply back and schedules the caller's resume.
func (f *Fabric) sendReply(c *endpoint, r *rpcReq, reply []byte, err error) {
	t := c.thread.cpu.serve(f.now, f.postCost)
	nd, dst := c.node, r.from.node
	if nd != dst {
		t = nd.nic.serve(f.now, t, f.msgSvc) + f.nicTx
		nd.stats.Msgs++
		b := f.sendBytes(len(reply))
		nd.stats.BytesTx += b
		dst.stats.BytesRx += b
		ser := int64(b) * f.byteSvc
		t = nd.tx.serve(f.now, t, ser) + f.wire
		t = dst.rx.serve(f.now, t-ser, ser)
		t = dst.nic.serve(f.now, t, f.msgSvc) + f.nicComp
		dst.stats.Msgs++
	}
	r.from.reply, r.from.replyErr = reply, err
	f.schedule(t, evResume, r.from, 0)
}
