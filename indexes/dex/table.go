package dex

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// The meta area of memory node 0's main region holds what a compute node
// needs of the tree beyond its nodes (doc.go, # Compute nodes in
// processes), below the superblock in the area's last
// indexes.SuperblockBytes:
//
//	0   the root pointer
//	8   M, as the compute node that built the tree resolved it
//	16  the partition word: the version of the partitions last published,
//	    shifted left by one, and lockBit while a repartitioning runs
//	24  two partition-table slots; version v is in slot v%2
//
// A repartitioning writes the slot of its version while the readers of
// the published version read the other; the partition word, read before
// and after a slot, tells them whether the version held still.
const (
	metaRoot    = 0
	metaSubtree = 8
	metaParts   = 16
	metaTables  = 24
	// tableBytes is one slot: 196 ranges of 8-byte keys.
	tableBytes = (transport.MetaBytes - indexes.SuperblockBytes - metaTables) / 2 &^ 7
)

// tableAddr is the slot of the partitions of version v.
func (x *Index) tableAddr(v uint64) transport.GAddr {
	return x.meta.Add(metaTables + v%2*tableBytes)
}

// table encodes p as a slot holds it: the range count (2 B), then each
// range's owner (2 B) and lower bound. It fails when p does not fit.
func (p *partitions) table(ks int) ([]byte, error) {
	if most := (tableBytes - 2) / (2 + ks); len(p.lows) > most {
		return nil, fmt.Errorf("dex: %d key ranges do not fit the partition table in the meta area (at most %d with %d-byte keys)", len(p.lows), most, ks)
	}
	b := binary.LittleEndian.AppendUint16(nil, uint16(len(p.lows)))
	for i, low := range p.lows {
		b = binary.LittleEndian.AppendUint16(b, uint16(p.owners[i]))
		b = append(b, low...)
	}
	return b, nil
}

// decodeTable reads the partitions of version v from a slot's image.
func decodeTable(b []byte, v uint64, ks, nodes int) (*partitions, error) {
	n := int(binary.LittleEndian.Uint16(b))
	if n == 0 || 2+n*(2+ks) > len(b) {
		return nil, fmt.Errorf("dex: partition table version %d holds %d ranges", v, n)
	}
	p := &partitions{version: v}
	for i, o := 0, 2; i < n; i, o = i+1, o+2+ks {
		owner, low := int(binary.LittleEndian.Uint16(b[o:])), bytes.Clone(b[o+2:o+2+ks])
		if owner >= nodes || i > 0 && bytes.Compare(p.lows[i-1], low) >= 0 {
			return nil, fmt.Errorf("dex: partition table version %d: range %d [%x, ...) of compute node %d is out of order or of no compute node", v, i, low, owner)
		}
		p.lows, p.owners = append(p.lows, low), append(p.owners, owner)
	}
	return p, nil
}

// staged reads the table of version v, which a repartitioning holding
// the partition word's lock has written and not yet published.
func (x *Index) staged(ep transport.Endpoint, v uint64) (*partitions, error) {
	b := make([]byte, tableBytes)
	if err := ep.Read(b, x.tableAddr(v)); err != nil {
		return nil, fmt.Errorf("dex: read partition table: %w", err)
	}
	return decodeTable(b, v, x.l.ks, len(x.comps))
}

// published returns the partitions last published, or have when they are
// of that version: the partition word, the slot of its version, and the
// word again, until the version holds still across the slot's read.
func (x *Index) published(ep transport.Endpoint, have *partitions) (*partitions, error) {
	for i := 0; ; i++ {
		v, err := x.partitionWord(ep)
		if err != nil || v>>1 == have.version {
			return have, err
		}
		p, err := x.staged(ep, v>>1)
		if err != nil {
			return nil, err
		}
		again, err := x.partitionWord(ep)
		if err != nil {
			return nil, err
		}
		if again>>1 == v>>1 {
			return p, nil
		}
		backoff(ep, i)
	}
}

func (x *Index) partitionWord(ep transport.Endpoint) (uint64, error) {
	var w [8]byte
	if err := ep.Read(w[:], x.meta.Add(metaParts)); err != nil {
		return 0, fmt.Errorf("dex: read partition word: %w", err)
	}
	return binary.LittleEndian.Uint64(w[:]), nil
}

// setPartitionWord publishes version v and releases the lock.
func (x *Index) setPartitionWord(ep transport.Endpoint, v uint64) error {
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], v<<1)
	if err := ep.Write(x.meta.Add(metaParts), w[:]); err != nil {
		return fmt.Errorf("dex: publish partitions version %d: %w", v, err)
	}
	return nil
}

// install makes p this instance's partitions unless they are as new.
func (x *Index) install(p *partitions) {
	for {
		cur := x.parts.Load()
		if cur.version >= p.version || x.parts.CompareAndSwap(cur, p) {
			return
		}
	}
}

// refreshPartitions installs the partitions last published when they are
// newer than routed, which a compute node's reply said are stale. Each
// compute node's own ranges are always current in its instance (it takes
// part in every move of them), so newer partitions only move other
// compute nodes' ranges, and installing them needs no quiescing.
func (c *client) refreshPartitions(routed *partitions) error {
	p, err := c.x.published(c.ep, routed)
	if err != nil {
		return err
	}
	c.x.install(p)
	return nil
}

// lockPartitions takes the partition word's lock, which makes
// repartitionings run one at a time across compute nodes, and returns
// the partitions it guards, brought up to date when another compute node
// has published newer ones.
func (c *client) lockPartitions() (*partitions, error) {
	x := c.x
	parts := x.parts.Load()
	for i := 0; ; i++ {
		w := parts.version << 1
		old, err := c.ep.CAS(x.meta.Add(metaParts), w, w|lockBit)
		if err != nil {
			return nil, fmt.Errorf("dex: lock the partition table: %w", err)
		}
		if old == w {
			return parts, nil
		}
		if old>>1 != parts.version {
			if err := c.refreshPartitions(parts); err != nil {
				return nil, err
			}
			parts = x.parts.Load()
			continue
		}
		// Another compute node's repartitioning holds it.
		backoff(c.ep, i)
	}
}

// publishMeta writes M and version 0 of the partitions, which every
// compute node derives from Env.Partitions, through the building compute
// node's setup endpoint.
func (x *Index) publishMeta(ep transport.Endpoint) error {
	var b [metaTables - metaSubtree]byte
	binary.LittleEndian.PutUint64(b[:], uint64(x.opt.m))
	if err := ep.Write(x.meta.Add(metaSubtree), b[:]); err != nil {
		return fmt.Errorf("dex: write the meta area: %w", err)
	}
	return nil
}

// attach opens the tree another compute node built: it reads M and the
// partitions last published.
func (x *Index) attach(ep transport.Endpoint) error {
	var w [8]byte
	if err := ep.Read(w[:], x.meta.Add(metaSubtree)); err != nil {
		return fmt.Errorf("dex: read M: %w", err)
	}
	x.opt.m = int(binary.LittleEndian.Uint64(w[:]))
	parts, err := x.published(ep, x.parts.Load())
	if err != nil {
		return err
	}
	x.parts.Store(parts)
	return nil
}
