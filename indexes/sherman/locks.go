package sherman

import (
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/internal/splitmix"
	"github.com/dmbench/dmbench/transport"
)

// The global lock table: one 64-bit lock word per slot, per memory node,
// in that node's on-chip device memory when it has some (the on-chip half
// of Sherman's HOCL: NIC atomics on device memory run ~4x faster than on
// host memory and need no PCIe round trip), else in host memory. A node's
// lock lives on the node's own memory node, so the WRITE of the node and
// the WRITE of its unlock travel on one QP and land in that order.
//
// A lock word is [version:48][tag:16]. tag is non-zero while the lock is
// held (the holder's thread tag, as Sherman's CAS(0, tag)). The versions
// and crc variants keep the version at 0, so acquire is CAS(0, tag) and
// release a WRITE of 0; the optlock variant bumps the version at every
// release, so that a reader that sees the same unlocked word before and
// after its READ of the node knows no writer held the node in between.
const (
	tagBits = 16
	tagMask = 1<<tagBits - 1
)

// lockTable is the lock array on one memory node.
type lockTable struct {
	base   transport.GAddr
	n      uint64 // lock words
	device bool
}

// metaLockTable is where a memory node's host-memory lock table address
// is published, in the meta area at the start of its main region; the
// root pointer is at offset 0 of memory node 0's (package inner).
const metaLockTable = 8

// newLockTables finds or makes the lock table of every memory node. Host
// tables are allocated once and published in the node's meta area with a
// CAS, so that every process building the index agrees on them.
func newLockTables(f transport.Fabric, ep transport.Endpoint, alloc *transport.Allocator, lockBytes uint64, onchip bool) ([]lockTable, uint64, error) {
	mems := f.Config().MemoryNodeIDs()
	tables := make([]lockTable, len(mems))
	var hostBytes uint64
	for _, m := range mems {
		if dev, err := f.Region(m, "device"); err == nil && onchip {
			n := min(lockBytes, dev.Size) / 8
			if n == 0 {
				return nil, 0, fmt.Errorf("the device region of memory node %d (%d bytes) holds no lock word", m, dev.Size)
			}
			tables[m] = lockTable{base: dev.Base, n: n, device: true}
			continue
		}
		main, err := f.Region(m, "main")
		if err != nil {
			return nil, 0, fmt.Errorf("lock table on memory node %d: %w", m, err)
		}
		meta := main.Base.Add(metaLockTable)
		var buf [8]byte
		if err := ep.Read(buf[:], meta); err != nil {
			return nil, 0, fmt.Errorf("reading the lock table address of memory node %d: %w", m, err)
		}
		if a := lockWord(buf[:]); a != 0 {
			tables[m] = lockTable{base: transport.GAddr(a), n: lockBytes / 8}
			continue
		}
		a, err := alloc.AllocOn(ep, m, lockBytes, transport.RegionAlign)
		if err != nil {
			return nil, 0, fmt.Errorf("lock table of %d bytes on memory node %d: %w", lockBytes, m, err)
		}
		old, err := ep.CAS(meta, 0, uint64(a))
		if err != nil {
			return nil, 0, fmt.Errorf("publishing the lock table of memory node %d: %w", m, err)
		}
		if old != 0 {
			a = transport.GAddr(old)
		} else {
			hostBytes += lockBytes
		}
		tables[m] = lockTable{base: a, n: lockBytes / 8}
	}
	return tables, hostBytes, nil
}

// lockRef names the lock word of one node.
type lockRef struct {
	mem   transport.NodeID
	index uint64
	addr  transport.GAddr
}

// lockOf hashes a node's address to its lock word, as Sherman does with
// CityHash64 of the page address.
func (x *Index) lockOf(node transport.GAddr) lockRef {
	t := &x.locks[node.Node()]
	i := splitmix.Mix(uint64(node)) % t.n
	return lockRef{mem: node.Node(), index: i, addr: t.base.Add(i * 8)}
}

// lockOfCharged is lockOf with the hash charged to the client.
func (c *client) lockOf(node transport.GAddr) lockRef {
	c.Charge(cost.HashKey())
	return c.x.lockOf(node)
}

// threadTag is the non-zero tag a client writes into a lock word.
func threadTag(ep transport.Endpoint) uint64 {
	return (uint64(ep.Node())<<8|uint64(ep.Thread()&0xff))%tagMask + 1
}

func lockWord(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
