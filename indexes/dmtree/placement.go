package dmtree

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/dmbench/dmbench/indexes/fpbtree"
	"github.com/dmbench/dmbench/transport"
)

// regionName is the region every compute node registers for tables.
const regionName = "dmtree-fp"

// collaborative is DMTree's collaborative fingerprint storage (section
// 3.2.1, 3.2.3): every compute node registers a table region, and a
// leaf's table lives at the same offset on all of them: the primary on
// the node the ring picks for the offset, cached copies on the others.
// The lock word ends the primary table block (section 3.3).
type collaborative struct {
	f    transport.Fabric
	g    *fpbtree.Geometry
	ring atomic.Pointer[ring]
	// base and stripe are by NodeID, slices since every search looks
	// one up: a compute node's region base and its index among compute
	// nodes (-1 for a memory node). Read-only after New.
	base    []transport.GAddr
	stripe  []int
	size    uint64
	compute []transport.NodeID
	next    []atomic.Uint64 // per compute node: next table of its stripe
	tables  atomic.Uint64
}

// newCollaborative registers the table regions, or with attach looks up
// those the building compute node registered, which hold the tables it
// wrote (fp_region_bytes is part of the superblock's identity, so their
// size agrees).
func newCollaborative(f transport.Fabric, g *fpbtree.Geometry, regionBytes uint64, vnodes int, attach bool) (*collaborative, error) {
	nodes := f.Config().NodeCount()
	p := &collaborative{f: f, g: g, size: regionBytes, base: make([]transport.GAddr, nodes), stripe: make([]int, nodes)}
	for n := range p.stripe {
		p.stripe[n] = -1
	}
	p.compute = f.Config().ComputeNodeIDs()
	p.next = make([]atomic.Uint64, len(p.compute))
	for i, n := range p.compute {
		var r transport.Region
		var err error
		if attach {
			if r, err = f.Region(n, regionName); err != nil {
				return nil, fmt.Errorf("the fingerprint tables live in compute node %d's memory, which is gone or was never registered: "+
					"DMTree can be attached only while the compute nodes that built it still run, not by a process that starts them afresh (%w)", n, err)
			}
		} else {
			r, err = f.AddRegion(n, regionName, regionBytes)
		}
		if err != nil {
			return nil, fmt.Errorf("fingerprint-table region on compute node %d: %w", n, err)
		}
		p.base[n] = r.Base
		p.stripe[n] = i
		p.next[i].Store(1) // offset 0 would read as "no table"
	}
	r, err := newRing(p.compute, vnodes)
	if err != nil {
		return nil, err
	}
	p.ring.Store(r)
	return p, nil
}

// NewTable allocates a table offset from the caller's stripe of the
// region (table t of compute node i is slot t*C+i), so that compute nodes
// allocate without coordinating; the ring, not the allocator, decides the
// primary.
func (p *collaborative) NewTable(ep transport.Endpoint, _ transport.GAddr) (uint64, error) {
	i := p.stripeOf(ep.Node())
	if i < 0 {
		return 0, fmt.Errorf("new fingerprint table from node %d, not a compute node", ep.Node())
	}
	slot := p.next[i].Add(1) - 1
	off := (slot*uint64(len(p.compute)) + uint64(i)) * uint64(p.g.TableRun)
	if off+uint64(p.g.TableRun) > p.size {
		return 0, fmt.Errorf("fingerprint-table region of %d bytes is full (raise fp_region_bytes)", p.size)
	}
	p.tables.Add(1)
	return off, nil
}

// Primary is the table at its offset on the node the ring picks.
func (p *collaborative) Primary(_ transport.GAddr, fp uint64) (transport.GAddr, error) {
	return p.base[p.ring.Load().lookup(fp)].Add(fp), nil
}

// Copy is the same offset on the caller's node when it is not the primary.
func (p *collaborative) Copy(n transport.NodeID, fp uint64) (transport.GAddr, bool) {
	if p.stripeOf(n) < 0 || p.ring.Load().lookup(fp) == n {
		return 0, false
	}
	return p.base[n].Add(fp), true
}

// stripeOf is n's index among compute nodes, -1 when it is none.
func (p *collaborative) stripeOf(n transport.NodeID) int {
	if int(n) >= len(p.stripe) {
		return -1
	}
	return p.stripe[n]
}

// Lock is the primary table block's last word.
func (p *collaborative) Lock(leaf transport.GAddr, fp uint64) (transport.GAddr, error) {
	a, err := p.Primary(leaf, fp)
	return a.Add(uint64(p.g.LockOffset())), err
}

// copyTables gives compute node to the table copies that the searches of
// every record by compute node from of src (p, or the placement of an
// index loaded alike) stored (searchTable, storeCopy), through setup
// endpoints: a search stores a copy of its leaf's table on its node
// unless the node is the table's primary. So to gets the copy from holds
// of each table neither is primary for, and a copy of each table from is
// primary for whose leaf holds a record (a search of every record visits
// exactly those leaves); of the tables it is primary for, none.
func (p *collaborative) copyTables(src *collaborative, from, to transport.NodeID) error {
	ep, sep := p.f.Setup(to), src.f.Setup(from)
	r := p.ring.Load()
	buf := make([]byte, p.g.Table-8) // a copy leaves out the lock word
	stride := uint64(len(p.compute))
	for i := range p.compute {
		for slot := uint64(1); slot < p.next[i].Load(); slot++ {
			fp := (slot*stride + uint64(i)) * uint64(p.g.TableRun)
			primary := r.lookup(fp)
			if primary == to {
				continue
			}
			if err := sep.Read(buf, src.base[from].Add(fp)); err != nil {
				return fmt.Errorf("read fingerprint table %d on compute node %d: %w", fp, from, err)
			}
			t, ok := p.g.DecodeTable(buf)
			if !ok || primary == from && !slices.ContainsFunc(t.FPs, func(b byte) bool { return b != 0 }) {
				continue
			}
			if err := ep.Write(p.base[to].Add(fp), buf); err != nil {
				return fmt.Errorf("write fingerprint table copy %d on compute node %d: %w", fp, to, err)
			}
		}
	}
	return nil
}

// bytes is the primary tables' footprint over all compute nodes.
func (p *collaborative) bytes() uint64 { return p.tables.Load() * uint64(p.g.TableRun) }
