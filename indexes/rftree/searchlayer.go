package rftree

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/dmbench/dmbench/transport"
)

// The search layer region (section 3.3.1): internal nodes are appended,
// log-structured, to chunks of chunk_bytes that lie on the memory nodes in
// turn; a chunk directory on memory node 0 lists them. A writer claims a
// node with one FAA on its chunk's tail; a chunk that fills is followed
// by a new one, which the first client to need it allocates and
// publishes with a CAS. Internal nodes are never freed (they never
// merge), so the used part of each chunk only grows, and a client reads
// the whole search layer with one READ per chunk.

func (x *Index) dirCount() transport.GAddr      { return x.dir }
func (x *Index) dirEntry(i int) transport.GAddr { return x.dir.Add(8 + 16*uint64(i)) }
func (x *Index) dirTail(i int) transport.GAddr  { return x.dirEntry(i).Add(8) }
func (x *Index) chunkNode(i int) transport.NodeID {
	return transport.NodeID(i % x.env.Fabric.Config().MemoryNodes)
}

// allocInternal claims room for one internal node in the search layer.
func (c *client) allocInternal() (transport.GAddr, error) {
	return c.x.allocInternal(c.ep, c.cn.alloc, &c.cn.chunk, c.flush)
}

// allocInternal claims a node in the current chunk with an FAA on its
// tail, moving on to the next chunk when it is full. cur is the chunk
// its caller appends to (-1: none yet); flush runs before each verb.
func (x *Index) allocInternal(ep transport.Endpoint, alloc *transport.Allocator, cur *atomic.Int64, flush func()) (transport.GAddr, error) {
	size := uint64(x.l.nodeBytes)
	var w [16]byte
	for range maxRetries {
		i := int(cur.Load())
		if i >= 0 {
			flush()
			if err := ep.Read(w[:8], x.dirEntry(i)); err != nil {
				return 0, fmt.Errorf("reading search-layer chunk %d: %w", i, err)
			}
			base := transport.GAddr(binary.LittleEndian.Uint64(w[:8]))
			old, err := ep.FAA(x.dirTail(i), size)
			if err != nil {
				return 0, fmt.Errorf("claiming a node in search-layer chunk %d: %w", i, err)
			}
			if old+size <= x.chunkBytes {
				return base.Add(old), nil
			}
		}
		if i+1 >= dirChunks {
			return 0, fmt.Errorf("the search layer has filled its %d chunks of %d bytes", dirChunks, x.chunkBytes)
		}
		if err := x.openChunk(ep, alloc, i+1, flush); err != nil {
			return 0, err
		}
		cur.CompareAndSwap(int64(i), int64(i+1))
	}
	return 0, fmt.Errorf("no search-layer node after %d tries", maxRetries)
}

// openChunk makes sure chunk i exists: if its directory entry is empty,
// allocate a chunk on memory node i mod memory nodes and CAS it in; the
// winner counts it in the directory.
func (x *Index) openChunk(ep transport.Endpoint, alloc *transport.Allocator, i int, flush func()) error {
	var w [8]byte
	flush()
	if err := ep.Read(w[:], x.dirEntry(i)); err != nil {
		return fmt.Errorf("reading search-layer chunk %d: %w", i, err)
	}
	if binary.LittleEndian.Uint64(w[:]) != 0 {
		return nil
	}
	a, err := alloc.AllocOn(ep, x.chunkNode(i), x.chunkBytes, transport.RegionAlign)
	if err != nil {
		return fmt.Errorf("allocating search-layer chunk %d: %w", i, err)
	}
	old, err := ep.CAS(x.dirEntry(i), 0, uint64(a))
	if err != nil {
		return fmt.Errorf("publishing search-layer chunk %d: %w", i, err)
	}
	if old != 0 {
		return nil // another client opened it; ours stays unused
	}
	x.chunkTotal.Add(x.chunkBytes)
	if _, err := ep.FAA(x.dirCount(), 1); err != nil {
		return fmt.Errorf("counting search-layer chunk %d: %w", i, err)
	}
	return nil
}

// searchLayer is one non-blocking copy of the search layer: the root word
// and the used part of every chunk, as READ.
type searchLayer struct {
	root   uint64
	chunks []chunkImage
}

type chunkImage struct {
	base transport.GAddr
	data []byte
}

// readSearchLayer READs the search layer: the root word and the
// directory's count (one batch), the directory entries, then every chunk
// in one batch of READs. Writers go on meanwhile: nodes may be caught
// mid-write, which the SLC tolerates (slc.go).
func (c *client) readSearchLayer() (searchLayer, error) {
	x := c.x
	var sl searchLayer
	var root, cnt [8]byte
	ops := []transport.Op{transport.ReadOp(root[:], x.rootPtr), transport.ReadOp(cnt[:], x.dirCount())}
	if err := c.post(ops); err != nil {
		return sl, fmt.Errorf("reading the root word and chunk count: %w", err)
	}
	sl.root = binary.LittleEndian.Uint64(root[:])
	n := int(min(binary.LittleEndian.Uint64(cnt[:]), dirChunks))
	if n == 0 {
		return sl, nil
	}
	dir := make([]byte, 16*n)
	if err := c.read(dir, x.dirEntry(0)); err != nil {
		return sl, fmt.Errorf("reading the chunk directory: %w", err)
	}
	ops = ops[:0]
	for i := range n {
		base := transport.GAddr(binary.LittleEndian.Uint64(dir[16*i:]))
		used := min(binary.LittleEndian.Uint64(dir[16*i+8:]), x.chunkBytes)
		used -= used % uint64(x.l.nodeBytes)
		if base == 0 || used == 0 {
			continue
		}
		ci := chunkImage{base: base, data: make([]byte, used)}
		sl.chunks = append(sl.chunks, ci)
		ops = append(ops, transport.ReadOp(ci.data, base))
	}
	if err := c.post(ops); err != nil {
		return sl, fmt.Errorf("reading %d search-layer chunks: %w", len(ops), err)
	}
	return sl, nil
}
