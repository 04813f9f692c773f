package fpbtree

import "github.com/dmbench/dmbench/transport"

// Placement says where a leaf's fingerprint table and lock word live. The
// FP-B+-tree keeps both in the leaf on the memory node (InLeaf); DMTree
// keeps the primary table and the lock on a compute node chosen by
// consistent hashing, with cached copies on the others (package dmtree).
type Placement interface {
	// NewTable chooses where the table of a new leaf at leaf lives and
	// returns the fingerprint-table pointer stored in the leaf header and
	// its bottom-level internal entry.
	NewTable(ep transport.Endpoint, leaf transport.GAddr) (fp uint64, err error)
	// Primary is the address of the leaf's authoritative table block.
	Primary(leaf transport.GAddr, fp uint64) (transport.GAddr, error)
	// Copy is the address of the caller's node's cached copy of the table,
	// when the placement keeps copies and the caller is not the primary.
	Copy(node transport.NodeID, fp uint64) (transport.GAddr, bool)
	// Lock is the address of the leaf's lock word.
	Lock(leaf transport.GAddr, fp uint64) (transport.GAddr, error)
}

// InLeaf is the FP-B+-tree placement (DMTree section 2.3, Figure 4): the
// table block sits in the leaf right after its header, its lock word last.
type InLeaf struct{ G *Geometry }

// NewTable needs no allocation: the table is part of the leaf.
func (p InLeaf) NewTable(transport.Endpoint, transport.GAddr) (uint64, error) { return 0, nil }

// Primary is the table block inside the leaf.
func (p InLeaf) Primary(leaf transport.GAddr, _ uint64) (transport.GAddr, error) {
	return leaf.Add(uint64(p.G.LeafHdr)), nil
}

// Copy: the FP-B+-tree caches no tables.
func (p InLeaf) Copy(transport.NodeID, uint64) (transport.GAddr, bool) { return 0, false }

// Lock is the last word of the in-leaf table block.
func (p InLeaf) Lock(leaf transport.GAddr, _ uint64) (transport.GAddr, error) {
	return leaf.Add(uint64(p.G.LeafHdr + p.G.LockOffset())), nil
}

// LeafHeaderLock places leaf locks in the leaf header on the memory node
// while the table lives elsewhere: DMTree's "Cache" ablation step, which
// moves fingerprint tables to compute nodes but not yet the locks.
type LeafHeaderLock struct{ Placement }

// Lock is the leaf header's lock word.
func (p LeafHeaderLock) Lock(leaf transport.GAddr, _ uint64) (transport.GAddr, error) {
	return leaf.Add(lhLock), nil
}
