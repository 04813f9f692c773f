//go:build linux && cgo && rdma

package verbs

import (
	"errors"
	"fmt"
	"sync"

	"github.com/dmbench/dmbench/transport"
)

// Responder is the memory-node side of the fabric: it registers the
// node's regions with the device and answers MethodConnect by creating a
// QP that faces the client's. After the exchange the node's CPU takes no
// part: the NIC serves READ, WRITE and the atomics on its own.
type Responder struct {
	h   *hca
	cq  *cq // RC responders complete nothing, but a QP needs a CQ
	mrs []*mr

	mu     sync.Mutex
	qps    []*qp
	closed bool
}

// NewResponder opens the device and registers every region of mem.
func NewResponder(opt HCAOptions, mem NodeMemory) (*Responder, error) {
	h, err := openHCA(opt)
	if err != nil {
		return nil, err
	}
	r := &Responder{h: h}
	if r.cq, err = h.newCQ(1); err != nil {
		return nil, errors.Join(err, r.Close())
	}
	l := mem.Layout()
	for i, rg := range l.Regions {
		m, err := h.register(mem.RegionBytes(i), true)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("verbs: region %v: %w", rg, err), r.Close())
		}
		r.mrs = append(r.mrs, m)
	}
	return r, nil
}

// Handler serves MethodConnect; register it on the node's server.
func (r *Responder) Handler() transport.Handler {
	return func(_ transport.Endpoint, req []byte) ([]byte, error) {
		in, err := DecodeConnectRequest(req)
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.closed {
			return nil, fmt.Errorf("verbs: device %s: the responder is closed", r.h.name)
		}
		q, err := r.h.newQP(r.cq, in.From)
		if err != nil {
			return nil, err
		}
		if err := q.connect(in.QP); err != nil {
			return nil, errors.Join(err, q.close())
		}
		r.qps = append(r.qps, q)
		out := ConnectReply{QP: q.info()}
		for _, m := range r.mrs {
			out.Regions = append(out.Regions, RemoteRegion{Addr: m.addr(), RKey: m.rkey(), Size: uint64(len(m.buf))})
		}
		return out.Encode(), nil
	}
}

// Close destroys the QPs, deregisters the regions and closes the device.
func (r *Responder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	for _, q := range r.qps {
		errs = append(errs, q.close())
	}
	for _, m := range r.mrs {
		errs = append(errs, m.close())
	}
	if r.cq != nil {
		errs = append(errs, r.cq.close())
	}
	errs = append(errs, r.h.close())
	return errors.Join(errs...)
}
