package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/dmbench/dmbench/transport"
)

// setupEndpoint applies verbs at once, outside virtual time and the
// statistics: bulk loading writes memory directly, since a run measures
// only what its clients do after the load.
type setupEndpoint struct {
	f    *Fabric
	node *node
	rng  *rand.Rand
	tag  transport.Tag
}

func (s *setupEndpoint) do(op *transport.Op) error {
	m, err := s.f.locate(op)
	if err != nil {
		return err
	}
	applyNow(m.mem, op)
	return nil
}

func (s *setupEndpoint) Read(dst []byte, src transport.GAddr) error {
	op := transport.ReadOp(dst, src)
	return s.do(&op)
}

func (s *setupEndpoint) Write(dst transport.GAddr, src []byte) error {
	op := transport.WriteOp(dst, src)
	return s.do(&op)
}

func (s *setupEndpoint) atomic(op transport.Op) (uint64, error) {
	err := s.do(&op)
	return op.Old, err
}

func (s *setupEndpoint) CAS(a transport.GAddr, expect, swap uint64) (uint64, error) {
	return s.atomic(transport.CASOp(a, expect, swap))
}

func (s *setupEndpoint) MaskedCAS(a transport.GAddr, expect, swap, cmpMask, swapMask uint64) (uint64, error) {
	return s.atomic(transport.MaskedCASOp(a, expect, swap, cmpMask, swapMask))
}

func (s *setupEndpoint) FAA(a transport.GAddr, add uint64) (uint64, error) {
	return s.atomic(transport.FAAOp(a, add))
}

func (s *setupEndpoint) Post(ops ...transport.Op) error {
	for i := range ops {
		if _, err := s.f.locate(&ops[i]); err != nil {
			return err
		}
	}
	for i := range ops {
		if err := s.do(&ops[i]); err != nil {
			return err
		}
	}
	return nil
}

func (s *setupEndpoint) Call(n transport.NodeID, method uint16, req []byte) ([]byte, error) {
	nd, err := s.f.node(n)
	if err != nil {
		return nil, fmt.Errorf("sim: RPC %d: %w", method, err)
	}
	h, ok := nd.handlers[method]
	if !ok {
		return nil, fmt.Errorf("sim: RPC %d to node %d: no handler registered for that method", method, n)
	}
	reply, err := h(s.f.Setup(n), req)
	if err != nil {
		return nil, fmt.Errorf("sim: RPC %d on node %d: %w", method, n, err)
	}
	return reply, nil
}

func (s *setupEndpoint) Compute(int64)          {}
func (s *setupEndpoint) Now() int64             { return s.f.Now() }
func (s *setupEndpoint) Node() transport.NodeID { return s.node.id }
func (s *setupEndpoint) Thread() int            { return 0 }
func (s *setupEndpoint) Rand() *rand.Rand       { return s.rng }
func (s *setupEndpoint) SetTag(t transport.Tag) { s.tag = t }
func (s *setupEndpoint) Tag() transport.Tag     { return s.tag }
func (s *setupEndpoint) Unpark()                {}
func (s *setupEndpoint) SetStep(transport.Step) {}
func (s *setupEndpoint) Step() transport.Step   { return 0 }
func (s *setupEndpoint) Sleep(int64)            {}
func (s *setupEndpoint) Backoff(int64)          {}
func (s *setupEndpoint) Park() {
	panic("sim: a setup endpoint waited for a lock: setup runs alone, so the lock can never be released")
}
