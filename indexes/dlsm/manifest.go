package dlsm

import (
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// What a compute node that attaches to a built dLSM (indexes.Env.Attach)
// learns from memory, in the meta areas of the memory nodes' main regions:
//
//	shard i's memory node (i mod M),  manifest slot of shard i: [8 address][8 bytes]
//	  +slotBase + 16*(i/M)            of its manifest, both 0 while it has none
//
// A manifest is LevelDB's MANIFEST reduced to what the bulk load leaves:
// the version of one shard, one 24-byte record per table in level order,
// each level in key order:
//
//	[8 address][4 entries][4 meta bytes: index, filter, footer][1 level][7 zero]
//
// The compute node that builds the index writes them during the bulk
// load, outside measured time; the attaching one reads its shard's and
// opens each table as the table cache does (index block, filter and
// footer READ and parsed).
const (
	slotBase      = 64
	slotBytes     = 16
	manifestEntry = 24
)

// slotAddr is where shard i's manifest slot lives, and an error when the
// meta area of its memory node holds no slot for it.
func (x *Index) slotAddr(i int) (transport.GAddr, error) {
	mem := x.mems[i%len(x.mems)]
	off := uint64(slotBase + slotBytes*(i/len(x.mems)))
	// The superblock (indexes.Claim) ends memory node 0's meta area;
	// every memory node keeps the same room for slots.
	if end := uint64(transport.MetaBytes - indexes.SuperblockBytes); off+slotBytes > end {
		return 0, fmt.Errorf("shard %d: the meta area of memory node %d holds manifest slots for %d shards", i, mem, (end-slotBase)/slotBytes)
	}
	r, err := x.env.Fabric.Region(mem, "main")
	if err != nil {
		return 0, fmt.Errorf("shard %d's manifest slot: %w", i, err)
	}
	return r.Base.Add(off), nil
}

// clearMeta zeroes every shard's manifest slot: the layout of an index
// no compute node has loaded.
func (x *Index) clearMeta(ep transport.Endpoint) error {
	for i := range x.bounds {
		a, err := x.slotAddr(i)
		if err != nil {
			return err
		}
		if err := ep.Write(a, make([]byte, slotBytes)); err != nil {
			return wrap(fmt.Sprintf("clear shard %d's manifest slot", i), err)
		}
	}
	return nil
}

// writeManifest records shard s's version in memory for the compute node
// that will attach to it. The manifest takes a chunk of its own, so the
// shard's tables and every later allocation of the run keep the addresses
// and allocator RPCs they have without it.
func (x *Index) writeManifest(ep transport.Endpoint, s *shard) error {
	var b []byte
	for lv, tables := range s.ver.levels {
		for _, t := range tables {
			b = binary.LittleEndian.AppendUint64(b, uint64(t.addr))
			b = binary.LittleEndian.AppendUint32(b, uint32(t.n))
			b = binary.LittleEndian.AppendUint32(b, uint32(t.bytes)-uint32(t.n*x.f.esz))
			b = append(b, byte(lv), 0, 0, 0, 0, 0, 0, 0)
		}
	}
	if len(b) == 0 {
		return nil
	}
	addr, err := transport.NewAllocator(x.env.Fabric, transport.RegionAlign).AllocOn(ep, s.mem, uint64(len(b)), 8)
	if err != nil {
		return wrap(fmt.Sprintf("allocate shard %d's manifest", s.id), err)
	}
	if err := ep.Write(addr, b); err != nil {
		return wrap(fmt.Sprintf("write shard %d's manifest", s.id), err)
	}
	slot, err := x.slotAddr(s.id)
	if err != nil {
		return err
	}
	if err := ep.Write(slot, binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, uint64(addr)), uint64(len(b)))); err != nil {
		return wrap(fmt.Sprintf("write shard %d's manifest slot", s.id), err)
	}
	return nil
}

// openManifest installs the version shard s's manifest records, opening
// every table: one doorbell of READs of their index blocks, filters and
// footers.
func (x *Index) openManifest(ep transport.Endpoint, s *shard) error {
	slot, err := x.slotAddr(s.id)
	if err != nil {
		return err
	}
	var w [slotBytes]byte
	if err := ep.Read(w[:], slot); err != nil {
		return wrap(fmt.Sprintf("read shard %d's manifest slot", s.id), err)
	}
	addr, size := transport.GAddr(binary.LittleEndian.Uint64(w[:])), binary.LittleEndian.Uint64(w[8:])
	if size == 0 {
		return nil
	}
	if size%manifestEntry != 0 {
		return fmt.Errorf("dlsm: shard %d's manifest of %d bytes", s.id, size)
	}
	b := make([]byte, size)
	if err := ep.Read(b, addr); err != nil {
		return wrap(fmt.Sprintf("read shard %d's manifest", s.id), err)
	}
	type entry struct {
		addr  transport.GAddr
		n, lv int
		meta  []byte
	}
	entries := make([]entry, size/manifestEntry)
	ops := make([]transport.Op, len(entries))
	for i := range entries {
		r := b[i*manifestEntry:]
		e := entry{addr: transport.GAddr(binary.LittleEndian.Uint64(r)), n: int(binary.LittleEndian.Uint32(r[8:])),
			meta: make([]byte, binary.LittleEndian.Uint32(r[12:])), lv: int(r[16])}
		if e.lv >= numLevels {
			return fmt.Errorf("dlsm: shard %d's manifest puts a table in level %d", s.id, e.lv)
		}
		ops[i] = transport.ReadOp(e.meta, e.addr.Add(uint64(e.n*x.f.esz)))
		entries[i] = e
	}
	if err := ep.Post(ops...); err != nil {
		return wrap(fmt.Sprintf("open shard %d's tables", s.id), err)
	}
	v := &version{}
	for _, e := range entries {
		t, err := x.f.parseMeta(e.addr, e.n, e.meta)
		if err != nil {
			return fmt.Errorf("dlsm: shard %d's table at %v: %w", s.id, e.addr, err)
		}
		t.id = s.nextTable
		s.nextTable++
		v.levels[e.lv] = append(v.levels[e.lv], t)
	}
	s.ver = v
	return nil
}
