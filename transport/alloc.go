package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// MetaBytes is reserved at the start of every memory node's main region
// for an index's well-known roots (root pointers, superblocks). The chunk
// server never hands it out.
const MetaBytes = 4096

// DefaultChunkBytes is the chunk size the Allocator asks for. Sherman
// hands out chunks of this order from its memory-side allocator.
const DefaultChunkBytes = 8 << 20

// ServeChunks registers the chunk server on every memory node of f: a
// bump allocator over the node's main region, past MetaBytes, answering
// MethodAllocChunk. Every fabric calls it when it is built.
func ServeChunks(f Fabric) error {
	for _, n := range f.Config().MemoryNodeIDs() {
		r, err := f.Region(n, "main")
		if err != nil {
			return err
		}
		f.Handle(n, MethodAllocChunk, ChunkHandler(r))
	}
	return nil
}

// ChunkHandler is the chunk server of one memory node's main region, for
// a fabric whose memory nodes run in processes of their own (tcp's
// memory-node servers), where ServeChunks cannot reach them.
func ChunkHandler(main Region) Handler {
	s := &chunkServer{region: main, next: MetaBytes}
	return s.serve
}

type chunkServer struct {
	mu     sync.Mutex // handlers may run on several cores at once
	region Region
	next   uint64 // offset into region of the next free byte
}

// ErrOutOfMemory is wrapped by allocations that do not fit.
var ErrOutOfMemory = errors.New("out of memory")

func (s *chunkServer) serve(_ Endpoint, req []byte) ([]byte, error) {
	if len(req) != 8 {
		return nil, fmt.Errorf("chunk request of %d bytes, want 8", len(req))
	}
	size := alignUp(binary.LittleEndian.Uint64(req), RegionAlign)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next+size > s.region.Size {
		return nil, fmt.Errorf("%w: chunk of %d bytes on region %s with %d bytes left", ErrOutOfMemory, size, s.region, s.region.Size-s.next)
	}
	a := s.region.Base.Add(s.next)
	s.next += size
	return binary.LittleEndian.AppendUint64(nil, uint64(a)), nil
}

// Allocator sub-allocates memory-node chunks for the clients of one
// compute node. Memory is never freed, as in Sherman. It is safe for use by
// every endpoint of its node on every fabric.
type Allocator struct {
	mu     Mutex // held across the chunk RPC
	chunk  uint64
	nodes  []NodeID
	rr     int
	cur    []span        // current chunk per memory node, indexed by NodeID
	served atomic.Uint64 // bytes handed out
}

type span struct{ next, end GAddr }

// NewAllocator makes an allocator over the memory nodes of f that asks for
// chunks of chunkBytes (DefaultChunkBytes when 0).
func NewAllocator(f Fabric, chunkBytes uint64) *Allocator {
	if chunkBytes == 0 {
		chunkBytes = DefaultChunkBytes
	}
	c := f.Config()
	return &Allocator{chunk: chunkBytes, nodes: c.MemoryNodeIDs(), cur: make([]span, c.MemoryNodes)}
}

// Alloc returns size bytes aligned to align (a power of two up to
// RegionAlign), on the memory nodes in round-robin order.
func (a *Allocator) Alloc(ep Endpoint, size, align uint64) (GAddr, error) {
	a.mu.Lock(ep)
	n := a.nodes[a.rr%len(a.nodes)]
	a.rr++
	a.mu.Unlock()
	return a.AllocOn(ep, n, size, align)
}

// AllocOn is Alloc on memory node n.
func (a *Allocator) AllocOn(ep Endpoint, n NodeID, size, align uint64) (GAddr, error) {
	if align == 0 || align&(align-1) != 0 || align > RegionAlign {
		return 0, fmt.Errorf("transport: alloc alignment %d is not a power of two up to %d", align, RegionAlign)
	}
	if int(n) >= len(a.cur) {
		return 0, fmt.Errorf("transport: alloc on node %d: not a memory node (memory nodes are 0-%d)", n, len(a.cur)-1)
	}
	a.mu.Lock(ep)
	defer a.mu.Unlock()
	s := &a.cur[n]
	p := GAddr(alignUp(uint64(s.next), align))
	if s.next == 0 || p.Add(size) > s.end {
		want := max(a.chunk, alignUp(size, RegionAlign))
		reply, err := ep.Call(n, MethodAllocChunk, binary.LittleEndian.AppendUint64(nil, want))
		if err != nil {
			return 0, fmt.Errorf("transport: alloc %d bytes on node %d: %w", size, n, err)
		}
		base := GAddr(binary.LittleEndian.Uint64(reply))
		*s = span{next: base, end: base.Add(want)}
		p = base
	}
	s.next = p.Add(size)
	a.served.Add(size)
	return p, nil
}

// Served is the number of bytes handed out so far.
func (a *Allocator) Served() uint64 { return a.served.Load() }
