package dex

import (
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// lockBit is set in a node's lock word while an RDMA writer holds it.
const lockBit = 1

// backoff charges a short wait before a retry, so that on the simulator
// the holder of a lock or an I/O flag gets to run.
func backoff(ep transport.Endpoint, attempt int) {
	ep.Backoff(cost.CachelineTransfer() << min(attempt, 6))
}

// readShared reads a node crossing partition boundaries with the RDMA
// optimistic lock (Algorithm 1, lines 3-6): the lock word, the node, the
// lock word again. It reports false when a writer held or changed it.
func (x *Index) readShared(ep transport.Endpoint, a transport.GAddr, dst node) (bool, error) {
	var w [8]byte
	if err := ep.Read(w[:], a); err != nil {
		return false, fmt.Errorf("dex: read lock word: %w", err)
	}
	v := binary.LittleEndian.Uint64(w[:])
	if v&lockBit != 0 {
		return false, nil
	}
	if err := ep.Read(dst, a); err != nil {
		return false, fmt.Errorf("dex: read node: %w", err)
	}
	if err := ep.Read(w[:], a); err != nil {
		return false, fmt.Errorf("dex: read lock word: %w", err)
	}
	return binary.LittleEndian.Uint64(w[:]) == v && dst.lockWord() == v, nil
}

// readNode reads a node: with the optimistic protocol when shared, with
// one READ otherwise (Algorithm 1, line 8), retrying until consistent.
func (x *Index) readNode(ep transport.Endpoint, a transport.GAddr, shared bool, dst node) error {
	if !shared {
		if err := ep.Read(dst, a); err != nil {
			return fmt.Errorf("dex: read node: %w", err)
		}
		return nil
	}
	for i := 0; ; i++ {
		ok, err := x.readShared(ep, a, dst)
		if err != nil || ok {
			return err
		}
		backoff(ep, i)
	}
}

// lockRemote takes a node's RDMA lock with CAS and returns the version it
// held.
func (x *Index) lockRemote(ep transport.Endpoint, a transport.GAddr) (uint64, error) {
	var w [8]byte
	if err := ep.Read(w[:], a); err != nil {
		return 0, fmt.Errorf("dex: read lock word: %w", err)
	}
	v := binary.LittleEndian.Uint64(w[:]) &^ lockBit
	for i := 0; ; i++ {
		old, err := ep.CAS(a, v, v|lockBit)
		if err != nil {
			return 0, fmt.Errorf("dex: lock node: %w", err)
		}
		if old == v {
			return v, nil
		}
		v = old &^ lockBit
		backoff(ep, i)
	}
}

// unlockRemote writes img (which must carry lock word version+2, unlocked)
// behind the lock word and then the lock word, in one doorbell batch: ops
// on one QP run in order, so no reader sees the new version before the
// new body.
func (x *Index) unlockRemote(ep transport.Endpoint, a transport.GAddr, img node) error {
	err := ep.Post(transport.WriteOp(a.Add(8), img[8:]), transport.WriteOp(a, img[:8]))
	if err != nil {
		return fmt.Errorf("dex: write and unlock node: %w", err)
	}
	return nil
}

// releaseRemote drops an RDMA lock without changing the node.
func (x *Index) releaseRemote(ep transport.Endpoint, a transport.GAddr, v uint64) error {
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], v)
	if err := ep.Write(a, w[:]); err != nil {
		return fmt.Errorf("dex: unlock node: %w", err)
	}
	return nil
}

// writeBody writes a node image except its lock word: the write-back of
// an owned (non-shared) node, whose lock word only RDMA writers of shared
// nodes use.
func (x *Index) writeBody(ep transport.Endpoint, a transport.GAddr, img node) error {
	if err := ep.Write(a.Add(8), img[8:]); err != nil {
		return fmt.Errorf("dex: write back node: %w", err)
	}
	return nil
}

// readRoot reads the root pointer.
func (x *Index) readRoot(ep transport.Endpoint) (transport.GAddr, error) {
	var w [8]byte
	if err := ep.Read(w[:], x.rootPtr); err != nil {
		return 0, fmt.Errorf("dex: read root pointer: %w", err)
	}
	return transport.GAddr(binary.LittleEndian.Uint64(w[:])), nil
}
