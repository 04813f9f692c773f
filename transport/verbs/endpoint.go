//go:build linux && cgo && rdma

package verbs

/*
#include "ibv.h"
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/internal/realtime"
)

// stageBytes is each endpoint's registered staging buffer: READ data
// lands there and WRITE data leaves from there (Go memory cannot be
// registered), atomics' old values included. Longer batches go in rounds.
const stageBytes = 256 << 10

// endpoint is one client: the tcp fabric's endpoint for RPCs, verbs to
// compute nodes and everything that is not a verb, and one RC QP to each
// memory node on a completion queue of its own for the rest.
type endpoint struct {
	transport.Endpoint // the control plane's endpoint
	f                  *Fabric
	tcpDetach          func()
	cq                 *cq
	stage              *mr
	qps                []*qp               // by memory node id
	layouts            []transport.Layout  // of the memory nodes, at connect
	remote             [][]RemoteRegion    // by memory node, by region index
	stats              transport.VerbStats // verbs on the QPs
	nextID             uint64
	broken             error               // a QP went to the error state
	wrs                [][]C.struct_dmb_wr // by memory node, reused
	done               []completion
}

// attach makes an endpoint on thread of compute node n and connects its
// QPs to every memory node through MethodConnect on the control plane.
func (f *Fabric) attach(n transport.NodeID, thread int) (*endpoint, error) {
	inner, detach, err := f.tcp.Attach(n, thread)
	if err != nil {
		return nil, fmt.Errorf("verbs: %w", err)
	}
	cfg := f.tcp.Config()
	e := &endpoint{Endpoint: inner, f: f, tcpDetach: detach}
	fail := func(err error) (*endpoint, error) {
		detach()
		return nil, errors.Join(err, e.close())
	}
	if e.cq, err = f.h.newCQ(cfg.MemoryNodes*maxWR + 1); err != nil {
		return fail(err)
	}
	buf, err := allocPinned(stageBytes)
	if err != nil {
		return fail(err)
	}
	if e.stage, err = f.h.register(buf, false); err != nil {
		return fail(errors.Join(err, freePinned(buf)))
	}
	ctl := f.tcp.Setup(n) // uncounted: connecting is not part of a run
	for _, m := range cfg.MemoryNodeIDs() {
		q, err := f.h.newQP(e.cq, m)
		if err != nil {
			return fail(err)
		}
		e.qps = append(e.qps, q)
		reply, err := ctl.Call(m, MethodConnect, ConnectRequest{From: n, QP: q.info()}.Encode())
		if err != nil {
			return fail(fmt.Errorf("verbs: QP exchange with memory node %d (its server must answer method %#04x: dmbench memnode with a verbs responder): %w", m, MethodConnect, err))
		}
		rep, err := DecodeConnectReply(reply)
		if err != nil {
			return fail(fmt.Errorf("verbs: QP exchange with memory node %d: %w", m, err))
		}
		l := transport.Layout{Node: m, Regions: f.tcp.Regions(m)}
		if len(rep.Regions) != len(l.Regions) {
			return fail(fmt.Errorf("verbs: memory node %d registered %d regions, its layout has %d", m, len(rep.Regions), len(l.Regions)))
		}
		if err := q.connect(rep.QP); err != nil {
			return fail(err)
		}
		e.layouts = append(e.layouts, l)
		e.remote = append(e.remote, rep.Regions)
	}
	e.makeLists(cfg.MemoryNodes)
	f.mu.Lock()
	f.eps = append(f.eps, e)
	f.mu.Unlock()
	return e, nil
}

// makeLists makes the work-request lists of n memory nodes.
func (e *endpoint) makeLists(n int) { e.wrs = make([][]C.struct_dmb_wr, n) }

// detach hands the endpoint's counters to the fabric.
func (e *endpoint) detach() {
	e.tcpDetach()
	e.f.mu.Lock()
	e.f.stats.Add(e.Endpoint.Node(), &e.stats)
	e.f.mu.Unlock()
	e.stats = transport.VerbStats{}
}

func (e *endpoint) close() error {
	var errs []error
	for _, q := range e.qps {
		errs = append(errs, q.close())
	}
	if e.stage != nil {
		errs = append(errs, e.stage.close(), freePinned(e.stage.buf))
	}
	if e.cq != nil {
		errs = append(errs, e.cq.close())
	}
	return errors.Join(errs...)
}

// rdma reports whether verbs to node n travel on a QP: memory nodes.
func (e *endpoint) rdma(n transport.NodeID) bool { return int(n) < len(e.qps) }

// check finds op's region on a memory node, or the *transport.AddrError.
func (e *endpoint) check(op *transport.Op) error {
	n := op.Addr.Node()
	_, err := e.layouts[n].Find(op.Kind, op.Addr, op.Len())
	return err
}

// count counts one verb on a QP, payload bytes as the other fabrics do.
func (e *endpoint) count(op *transport.Op) {
	out, in := realtime.Payload(op)
	e.stats.Count(e.Endpoint.Tag(), op.Addr.Node(), op.Kind, out, in)
}

// single runs one verb on its own doorbell.
func (e *endpoint) single(op *transport.Op) error {
	if err := e.check(op); err != nil {
		return err
	}
	if err := e.exec([]*transport.Op{op}); err != nil {
		return err
	}
	e.count(op)
	e.stats.Doorbells++
	return nil
}

func (e *endpoint) Read(dst []byte, src transport.GAddr) error {
	if !e.rdma(src.Node()) {
		return e.Endpoint.Read(dst, src)
	}
	op := transport.ReadOp(dst, src)
	return e.single(&op)
}

func (e *endpoint) Write(dst transport.GAddr, src []byte) error {
	if !e.rdma(dst.Node()) {
		return e.Endpoint.Write(dst, src)
	}
	op := transport.WriteOp(dst, src)
	return e.single(&op)
}

func (e *endpoint) CAS(a transport.GAddr, expect, swap uint64) (uint64, error) {
	if !e.rdma(a.Node()) {
		return e.Endpoint.CAS(a, expect, swap)
	}
	return e.cas(a, expect, swap)
}

func (e *endpoint) cas(a transport.GAddr, expect, swap uint64) (uint64, error) {
	op := transport.CASOp(a, expect, swap)
	err := e.single(&op)
	return op.Old, err
}

// readWord is the masked-CAS fallback's READ.
func (e *endpoint) readWord(a transport.GAddr) (uint64, error) {
	var b [8]byte
	op := transport.ReadOp(b[:], a)
	if err := e.single(&op); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// MaskedCAS runs as READ + CAS on memory nodes (maskedCAS), counted as
// the READ and CASes it sends; on compute nodes the control plane's
// server runs it natively.
func (e *endpoint) MaskedCAS(a transport.GAddr, expect, swap, cmpMask, swapMask uint64) (uint64, error) {
	if !e.rdma(a.Node()) {
		return e.Endpoint.MaskedCAS(a, expect, swap, cmpMask, swapMask)
	}
	op := transport.MaskedCASOp(a, expect, swap, cmpMask, swapMask)
	if err := e.check(&op); err != nil {
		return 0, err
	}
	return maskedCAS(e, a, expect, swap, cmpMask, swapMask)
}

func (e *endpoint) FAA(a transport.GAddr, add uint64) (uint64, error) {
	if !e.rdma(a.Node()) {
		return e.Endpoint.FAA(a, add)
	}
	op := transport.FAAOp(a, add)
	err := e.single(&op)
	return op.Old, err
}

// Post checks every op first, so a batch with a bad op has no effect.
// The ops to memory nodes go on their QPs, one doorbell per QP, with a
// masked CAS splitting the batch where it stands (it needs its READ's
// answer); the ops to compute nodes go through the control plane. It
// counts one doorbell for the batch, as the other fabrics do, plus the
// fallback's own.
func (e *endpoint) Post(ops ...transport.Op) error {
	var remote []transport.Op
	var idx []int
	for i := range ops {
		o := &ops[i]
		if o.Kind != transport.VerbRead && o.Kind != transport.VerbWrite && !o.Kind.Atomic() {
			return fmt.Errorf("verbs: post op %d of %d: a %s cannot be posted", i, len(ops), o.Kind)
		}
		n := o.Addr.Node()
		var err error
		if e.rdma(n) {
			err = e.check(o)
		} else {
			l := transport.Layout{Node: n, Regions: e.f.tcp.Regions(n)}
			_, err = l.Find(o.Kind, o.Addr, o.Len())
			remote = append(remote, *o)
			idx = append(idx, i)
		}
		if err != nil {
			return fmt.Errorf("verbs: post op %d of %d: %w", i, len(ops), err)
		}
	}
	var batch []*transport.Op
	rang := false
	for i := range ops {
		o := &ops[i]
		if !e.rdma(o.Addr.Node()) {
			continue
		}
		if o.Kind == transport.VerbMaskedCAS {
			if err := e.exec(batch); err != nil {
				return err
			}
			batch = batch[:0]
			old, err := maskedCAS(e, o.Addr, o.Expect, o.Swap, o.CmpMask, o.SwapMask)
			if err != nil {
				return err
			}
			o.Old = old
			continue
		}
		batch = append(batch, o)
	}
	if err := e.exec(batch); err != nil {
		return err
	}
	for i := range ops {
		if o := &ops[i]; e.rdma(o.Addr.Node()) && o.Kind != transport.VerbMaskedCAS {
			e.count(o)
			rang = true
		}
	}
	if len(remote) > 0 {
		if err := e.Endpoint.Post(remote...); err != nil {
			return err
		}
		for j, i := range idx {
			ops[i].Old = remote[j].Old
			if remote[j].Addr.Node() != e.Endpoint.Node() {
				rang = false // the control plane counted the doorbell
			}
		}
	}
	if rang {
		e.stats.Doorbells++
	}
	return nil
}

// piece is a part of an op staged for one round.
type piece struct {
	op     *transport.Op
	stage  int // offset in the staging buffer
	bufOff int // offset in op.Buf
	n      int
}

// exec runs checked ops to memory nodes in rounds: each round stages as
// many ops (or parts of long READs and WRITEs) as the staging buffer and
// the QPs' send queues hold, rings one doorbell per QP, and waits for
// every QP's signalled completion. Rounds run one after another, so each
// node sees its ops in order.
func (e *endpoint) exec(ops []*transport.Op) error {
	if e.broken != nil {
		return e.broken
	}
	var pieces []piece
	used := 0
	flush := func() error {
		err := e.round(pieces)
		pieces, used = pieces[:0], 0
		return err
	}
	for _, op := range ops {
		n := op.Addr.Node()
		if op.Kind.Atomic() {
			if used+8 > stageBytes || len(e.wrs[n]) == maxWR {
				if err := flush(); err != nil {
					return err
				}
			}
			e.stageWR(op, used, 0, 8)
			pieces = append(pieces, piece{op: op, stage: used, n: 8})
			used += 8
			continue
		}
		for off := 0; off < len(op.Buf) || off == 0; {
			if used == stageBytes || len(e.wrs[n]) == maxWR {
				if err := flush(); err != nil {
					return err
				}
			}
			k := min(len(op.Buf)-off, stageBytes-used)
			e.stageWR(op, used, off, k)
			pieces = append(pieces, piece{op: op, stage: used, bufOff: off, n: k})
			used += (k + 7) &^ 7 // keep atomics' slots aligned
			off += k
			if k == 0 {
				break
			}
		}
	}
	if len(pieces) == 0 {
		return nil
	}
	return flush()
}

// stageWR adds the work request of a piece to its node's list, copying
// WRITE data into the staging buffer.
func (e *endpoint) stageWR(op *transport.Op, stage, bufOff, n int) {
	node := op.Addr.Node()
	i, _ := e.layouts[node].Find(op.Kind, op.Addr, op.Len()) // checked
	rg := e.layouts[node].Regions[i]
	remote := e.remote[node][i].Addr + uint64(op.Addr-rg.Base) + uint64(bufOff)
	w := C.struct_dmb_wr{local: C.uint64_t(e.stage.addr() + uint64(stage)), remote: C.uint64_t(remote),
		lkey: C.uint32_t(e.stage.lkey()), rkey: C.uint32_t(e.remote[node][i].RKey), len: C.uint32_t(n),
		opcode: opcodes[op.Kind]}
	switch op.Kind {
	case transport.VerbWrite:
		copy(e.stage.buf[stage:], op.Buf[bufOff:bufOff+n])
	case transport.VerbCAS:
		w.compare_add, w.swap = C.uint64_t(op.Expect), C.uint64_t(op.Swap)
	case transport.VerbFAA:
		w.compare_add = C.uint64_t(op.Add)
	}
	e.wrs[node] = append(e.wrs[node], w)
}

// round posts every node's staged list, waits for their completions and
// copies READ data and old values out.
func (e *endpoint) round(pieces []piece) error {
	want := map[uint64]*qp{}
	var first error
	for n, wrs := range e.wrs {
		if len(wrs) == 0 {
			continue
		}
		e.nextID++
		if err := e.qps[n].post(wrs, e.nextID); err != nil {
			first = err
			break
		}
		want[e.nextID] = e.qps[n]
	}
	for n := range e.wrs {
		e.wrs[n] = e.wrs[n][:0]
	}
	for spins := 0; len(want) > 0; spins++ {
		var err error
		if e.done, err = e.cq.poll(e.done[:0]); err != nil {
			e.broken = err
			return err
		}
		for _, c := range e.done {
			q, ok := want[c.id]
			if !ok {
				continue
			}
			delete(want, c.id)
			if c.status != C.IBV_WC_SUCCESS && first == nil {
				first = fmt.Errorf("verbs: device %s QP %d (to memory node %d): %s", e.f.h.name, q.num(), q.peer, wcStatus(c.status))
				e.broken = first
			}
		}
		if len(e.done) == 0 && spins%64 == 63 {
			runtime.Gosched() // let a starved goroutine of this process run
		}
	}
	if first != nil {
		return first
	}
	for _, p := range pieces {
		switch p.op.Kind {
		case transport.VerbRead:
			copy(p.op.Buf[p.bufOff:p.bufOff+p.n], e.stage.buf[p.stage:])
		case transport.VerbCAS, transport.VerbFAA:
			// The NIC leaves the old value in the host's byte order.
			p.op.Old = binary.NativeEndian.Uint64(e.stage.buf[p.stage:])
		}
	}
	return nil
}

var _ transport.Endpoint = (*endpoint)(nil)
