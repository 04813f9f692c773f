//go:build linux && cgo && rdma

package verbs

/*
#cgo LDFLAGS: -libverbs
#include <errno.h>
#include <stdlib.h>
#include "ibv.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/dmbench/dmbench/transport"
)

// maxWR is how many work requests one doorbell links (DMB_MAX_WR).
const maxWR = C.DMB_MAX_WR

// hca is one opened device port with its protection domain: everything a
// process registers and connects goes through it.
type hca struct {
	name     string
	ctx      *C.struct_ibv_context
	pd       *C.struct_ibv_pd
	port     uint8
	lid      uint16
	gid      [16]byte
	opt      HCAOptions
	mtu      C.int
	rdAtomic C.int // outstanding READs and atomics per QP, both ways
}

// openHCA opens the device opt names (the first when none) and its port.
// With no device at all it returns ErrNoDevice.
func openHCA(opt HCAOptions) (*hca, error) {
	if opt.Port == 0 {
		opt.Port = 1
	}
	if opt.Port < 1 || opt.Port > 255 {
		return nil, fmt.Errorf("verbs: port %d: ports are numbered 1-255", opt.Port)
	}
	var n C.int
	list, err := C.dmb_get_device_list(&n)
	if list == nil {
		if errors.Is(err, syscall.ENOSYS) || err == nil {
			return nil, ErrNoDevice
		}
		return nil, fmt.Errorf("verbs: listing RDMA devices: %w", err)
	}
	defer C.ibv_free_device_list(list)
	devs := unsafe.Slice(list, int(n))
	if len(devs) == 0 {
		return nil, ErrNoDevice
	}
	var names []string
	var dev *C.struct_ibv_device
	for _, d := range devs {
		name := C.GoString(C.ibv_get_device_name(d))
		names = append(names, name)
		if dev == nil && (opt.Device == "" || opt.Device == name) {
			dev = d
		}
	}
	if dev == nil {
		return nil, fmt.Errorf("verbs: device %q is not one of this host's: %v", opt.Device, names)
	}
	h := &hca{name: C.GoString(C.ibv_get_device_name(dev)), port: uint8(opt.Port), opt: opt}
	if h.ctx, err = C.ibv_open_device(dev); h.ctx == nil {
		return nil, fmt.Errorf("verbs: opening device %s: %w", h.name, err)
	}
	fail := func(err error) (*hca, error) { return nil, errors.Join(err, h.close()) }
	var atomicCap C.int
	if rc := C.dmb_max_rd_atomic(h.ctx, &h.rdAtomic, &atomicCap); rc != 0 {
		return fail(h.errno("query device", rc))
	}
	if atomicCap == C.IBV_ATOMIC_NONE {
		return fail(fmt.Errorf("verbs: device %s offers no atomics (atomic_cap NONE): the indexes need CAS and FAA", h.name))
	}
	h.rdAtomic = max(1, min(h.rdAtomic, 16))
	var state C.int
	var lid C.uint16_t
	if rc := C.dmb_query_port(h.ctx, C.uint8_t(h.port), &lid, &h.mtu, &state); rc != 0 {
		return fail(h.errno(fmt.Sprintf("query port %d", h.port), rc))
	}
	if state != C.IBV_PORT_ACTIVE {
		return fail(fmt.Errorf("verbs: device %s port %d is not active (state %d)", h.name, h.port, int(state)))
	}
	h.lid = uint16(lid)
	if opt.UseGID {
		var gid C.union_ibv_gid
		if rc := C.ibv_query_gid(h.ctx, C.uint8_t(h.port), C.int(opt.GIDIndex), &gid); rc != 0 {
			return fail(h.errno(fmt.Sprintf("query GID %d of port %d", opt.GIDIndex, h.port), rc))
		}
		h.gid = *(*[16]byte)(unsafe.Pointer(&gid))
	}
	if h.pd, err = C.ibv_alloc_pd(h.ctx); h.pd == nil {
		return fail(fmt.Errorf("verbs: device %s: allocating a protection domain: %w", h.name, err))
	}
	return h, nil
}

// errno wraps a verbs call's nonzero return (an errno value).
func (h *hca) errno(what string, rc C.int) error {
	return fmt.Errorf("verbs: device %s: %s: %w", h.name, what, syscall.Errno(rc))
}

func (h *hca) close() error {
	var errs []error
	if h.pd != nil {
		if rc := C.ibv_dealloc_pd(h.pd); rc != 0 {
			errs = append(errs, h.errno("dealloc pd", rc))
		}
		h.pd = nil
	}
	if h.ctx != nil {
		if rc := C.ibv_close_device(h.ctx); rc != 0 {
			errs = append(errs, h.errno("close device", rc))
		}
		h.ctx = nil
	}
	return errors.Join(errs...)
}

// mr is a registered memory region: remote ones serve a node's region to
// peers, local ones are a client's staging buffer.
type mr struct {
	h   *hca
	mr  *C.struct_ibv_mr
	buf []byte
}

// register registers buf, which must not be Go heap memory (the NIC
// reaches it behind the garbage collector's back): a mapping from
// allocPinned or a region the node's server mapped.
func (h *hca) register(buf []byte, remote bool) (*mr, error) {
	rem := C.int(0)
	if remote {
		rem = 1
	}
	m, err := C.dmb_reg_mr(h.pd, unsafe.Pointer(unsafe.SliceData(buf)), C.size_t(len(buf)), rem)
	if m == nil {
		return nil, fmt.Errorf("verbs: device %s: registering %d bytes: %w", h.name, len(buf), err)
	}
	return &mr{h: h, mr: m, buf: buf}, nil
}

func (m *mr) addr() uint64 { return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(m.buf)))) }
func (m *mr) lkey() uint32 { return uint32(m.mr.lkey) }
func (m *mr) rkey() uint32 { return uint32(m.mr.rkey) }

func (m *mr) close() error {
	if rc := C.ibv_dereg_mr(m.mr); rc != 0 {
		return m.h.errno("dereg mr", rc)
	}
	return nil
}

// allocPinned maps size bytes for registration: huge pages when the host
// has them reserved, else plain pages.
func allocPinned(size int) ([]byte, error) {
	const flags = syscall.MAP_PRIVATE | syscall.MAP_ANONYMOUS
	const huge = 2 << 20
	if rounded := (size + huge - 1) / huge * huge; rounded > 0 {
		if b, err := syscall.Mmap(-1, 0, rounded, syscall.PROT_READ|syscall.PROT_WRITE, flags|syscall.MAP_HUGETLB); err == nil {
			return b[:size], nil
		}
	}
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, flags)
	if err != nil {
		return nil, fmt.Errorf("verbs: mapping %d bytes: %w", size, err)
	}
	return b, nil
}

func freePinned(b []byte) error { return syscall.Munmap(b[:cap(b)]) }

// cq is a completion queue, polled in batches.
type cq struct {
	h  *hca
	cq *C.struct_ibv_cq
}

func (h *hca) newCQ(entries int) (*cq, error) {
	c, err := C.ibv_create_cq(h.ctx, C.int(entries), nil, nil, 0)
	if c == nil {
		return nil, fmt.Errorf("verbs: device %s: creating a CQ of %d entries: %w", h.name, entries, err)
	}
	return &cq{h: h, cq: c}, nil
}

func (c *cq) close() error {
	if rc := C.ibv_destroy_cq(c.cq); rc != 0 {
		return c.h.errno("destroy cq", rc)
	}
	return nil
}

// completion is one work completion: the id of its doorbell batch and
// the ibv_wc_status.
type completion struct {
	id     uint64
	status C.int
}

// poll appends the completions waiting on the queue, up to 16.
func (c *cq) poll(out []completion) ([]completion, error) {
	var ids [16]C.uint64_t
	var st [16]C.int
	n := C.dmb_poll(c.cq, 16, &ids[0], &st[0])
	if n < 0 {
		return out, fmt.Errorf("verbs: device %s: poll cq failed (%d)", c.h.name, int(n))
	}
	for i := range int(n) {
		out = append(out, completion{id: uint64(ids[i]), status: st[i]})
	}
	return out, nil
}

// qp is one RC queue pair, facing one node.
type qp struct {
	h    *hca
	qp   *C.struct_ibv_qp
	psn  uint32
	peer transport.NodeID
}

// newQP creates an RC QP on c and moves it to INIT.
func (h *hca) newQP(c *cq, peer transport.NodeID) (*qp, error) {
	q, err := C.dmb_create_qp(h.pd, c.cq)
	if q == nil {
		return nil, fmt.Errorf("verbs: device %s: creating an RC QP to node %d: %w", h.name, peer, err)
	}
	p := &qp{h: h, qp: q, psn: rand.Uint32() & 0xffffff, peer: peer}
	if rc := C.dmb_qp_init(q, C.uint8_t(h.port)); rc != 0 {
		return nil, errors.Join(p.errno("INIT", rc), p.close())
	}
	return p, nil
}

func (q *qp) num() uint32 { return uint32(q.qp.qp_num) }

func (q *qp) errno(what string, rc C.int) error {
	return fmt.Errorf("verbs: device %s QP %d (to node %d): %s: %w", q.h.name, q.num(), q.peer, what, syscall.Errno(rc))
}

// info is what the peer needs to connect to q.
func (q *qp) info() QPInfo {
	return QPInfo{LID: q.h.lid, GID: q.h.gid, QPN: q.num(), PSN: q.psn}
}

// connect moves q through RTR to RTS, facing the peer's QP.
func (q *qp) connect(peer QPInfo) error {
	useGID := C.int(0)
	if q.h.opt.UseGID {
		useGID = 1
	}
	if rc := C.dmb_qp_rtr(q.qp, C.uint8_t(q.h.port), q.h.mtu, C.uint32_t(peer.QPN), C.uint32_t(peer.PSN),
		C.uint16_t(peer.LID), (*C.uint8_t)(unsafe.Pointer(&peer.GID[0])), useGID, C.int(q.h.opt.GIDIndex), q.h.rdAtomic); rc != 0 {
		return q.errno(fmt.Sprintf("RTR facing QP %d", peer.QPN), rc)
	}
	if rc := C.dmb_qp_rts(q.qp, C.uint32_t(q.psn), q.h.rdAtomic); rc != 0 {
		return q.errno("RTS", rc)
	}
	return nil
}

// post rings one doorbell for wrs (at most maxWR), the last signalled and
// carrying id.
func (q *qp) post(wrs []C.struct_dmb_wr, id uint64) error {
	var bad C.int
	if rc := C.dmb_post(q.qp, &wrs[0], C.int(len(wrs)), C.uint64_t(id), &bad); rc != 0 {
		return q.errno(fmt.Sprintf("post_send of %d work requests (request %d refused)", len(wrs), int(bad)), rc)
	}
	runtime.KeepAlive(wrs)
	return nil
}

func (q *qp) close() error {
	if rc := C.ibv_destroy_qp(q.qp); rc != 0 {
		return q.errno("destroy", rc)
	}
	return nil
}

// wcStatus names a completion status.
func wcStatus(s C.int) string { return C.GoString(C.ibv_wc_status_str(uint32(s))) }

// Opcodes of the verbs a doorbell batch carries.
var opcodes = [...]C.uint32_t{
	transport.VerbRead:  C.IBV_WR_RDMA_READ,
	transport.VerbWrite: C.IBV_WR_RDMA_WRITE,
	transport.VerbCAS:   C.IBV_WR_ATOMIC_CMP_AND_SWP,
	transport.VerbFAA:   C.IBV_WR_ATOMIC_FETCH_AND_ADD,
}
