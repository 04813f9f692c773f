package tcp

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/internal/wordmem"
)

// nodeMem is the memory a server holds for its node: the node's layout and
// the regions behind it. A layout asked for fresh replaces the whole
// nodeMem; the old one is released once no connection uses it.
type nodeMem struct {
	node transport.NodeID
	mode transport.Mode
	mem  wordmem.Memory
	// view is replaced whole when a region is added, so verbs read the
	// layout without a lock.
	view atomic.Pointer[memView]
	// chunks serves transport.MethodAllocChunk from the main region of a
	// memory node; nil on compute nodes.
	chunks transport.Handler
	// onChange, when set, sees every new view before it is published
	// (ServerConfig.OnMemory).
	onChange func(Memory) error

	mu        sync.Mutex // guards adding regions and the fields below
	regionIDs uint64
	capacity  uint64 // bytes the regions may take in all; 0: no bound
	used      uint64
	refs      int  // connections (and the owner) using it
	retired   bool // replaced: release once refs reaches 0
	released  bool
}

// memView is one state of a node's layout with its memory.
type memView struct {
	layout  transport.Layout
	regions []*wordmem.Region // parallel to layout.Regions
}

// newNodeMem lays out main (and device, when device > 0) regions of node.
func newNodeMem(node transport.NodeID, mode transport.Mode, main, device, capacity uint64, chunks bool, onChange func(Memory) error) (*nodeMem, error) {
	g := &nodeMem{node: node, mode: mode, capacity: capacity, refs: 1, onChange: onChange}
	g.mem = wordmem.NewMemory(mode)
	g.view.Store(&memView{layout: transport.Layout{Node: node}})
	if main > 0 {
		if _, err := g.addRegion("main", main, false); err != nil {
			return nil, err
		}
	}
	if device > 0 {
		if _, err := g.addRegion("device", device, true); err != nil {
			return nil, errors.Join(err, g.release())
		}
	}
	if chunks {
		r, err := g.view.Load().layout.Lookup("main")
		if err != nil {
			return nil, errors.Join(err, g.release())
		}
		g.chunks = transport.ChunkHandler(r)
	}
	return g, nil
}

// addRegion registers a region of size bytes after the others.
func (g *nodeMem) addRegion(name string, size uint64, device bool) (transport.Region, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		return transport.Region{}, fmt.Errorf("tcp: region %q on node %d: the node's memory is released", name, g.node)
	}
	if g.capacity > 0 && g.used+size > g.capacity {
		return transport.Region{}, fmt.Errorf("tcp: region %q of %d bytes on node %d: the node serves at most %d bytes and holds %d", name, size, g.node, g.capacity, g.used)
	}
	old := g.view.Load()
	next := &memView{layout: transport.Layout{Node: g.node, Regions: append([]transport.Region(nil), old.layout.Regions...)}}
	rg, err := next.layout.Add(name, size, device)
	if err != nil {
		return transport.Region{}, err
	}
	m, err := wordmem.NewRegion(g.regionIDs, size)
	if err != nil {
		return transport.Region{}, fmt.Errorf("tcp: node %d: %w", g.node, err)
	}
	next.regions = append(append([]*wordmem.Region(nil), old.regions...), m)
	if g.onChange != nil {
		if err := g.onChange(next); err != nil {
			return transport.Region{}, errors.Join(fmt.Errorf("tcp: node %d: region %q: %w", g.node, name, err), m.Release())
		}
	}
	g.regionIDs++
	g.used += size
	g.view.Store(next)
	return rg, nil
}

// Layout is the view's layout (Memory).
func (v *memView) Layout() transport.Layout { return v.layout }

// RegionBytes is the memory behind the view's i-th region (Memory).
func (v *memView) RegionBytes(i int) []byte { return v.regions[i].Bytes() }

// resolve finds the memory behind [a, a+n) for verb v, or the
// *transport.AddrError that says why there is none.
func (v *memView) resolve(k transport.VerbKind, a transport.GAddr, n uint64) (wordmem.Target, error) {
	i, err := v.layout.Find(k, a, n)
	if err != nil {
		return wordmem.Target{}, err
	}
	return wordmem.Target{Region: v.regions[i], Off: uint64(a - v.layout.Regions[i].Base)}, nil
}

// post checks every op of a batch, then runs them in order: a batch with a
// bad op has no effect. READs fill their own Buf.
func (g *nodeMem) post(ops []transport.Op) error {
	v := g.view.Load()
	var small [16]wordmem.Target
	ts := small[:0]
	for i := range ops {
		t, err := v.resolve(ops[i].Kind, ops[i].Addr, ops[i].Len())
		if err != nil {
			return err
		}
		ts = append(ts, t)
	}
	for i := range ops {
		g.mem.Exec(ts[i], &ops[i], ops[i].Buf)
	}
	return nil
}

// serveBatch checks every op of a decoded batch, then runs them in order,
// appending READ data and old values to out.
func (g *nodeMem) serveBatch(ops []batchOp, out []byte) ([]byte, error) {
	v := g.view.Load()
	var small [16]wordmem.Target
	ts := small[:0]
	for i := range ops {
		o := &ops[i]
		n := o.Len()
		if o.Kind == transport.VerbRead {
			n = uint64(o.n)
		}
		t, err := v.resolve(o.Kind, o.Addr, n)
		if err != nil {
			if len(ops) > 1 {
				return nil, fmt.Errorf("batch op %d of %d: %w", i, len(ops), err)
			}
			return nil, err
		}
		ts = append(ts, t)
	}
	for i := range ops {
		o := &ops[i]
		var dst []byte
		if o.Kind == transport.VerbRead {
			start := len(out)
			out = append(out, make([]byte, o.n)...)
			dst = out[start:]
		}
		g.mem.Exec(ts[i], &o.Op, dst)
		if o.Kind.Atomic() {
			out = appendU64(out, o.Old)
		}
	}
	return out, nil
}

// acquire and drop count the users of g; the last drop of a retired g
// returns its memory to the OS.
func (g *nodeMem) acquire() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.retired {
		return false
	}
	g.refs++
	return true
}

func (g *nodeMem) drop() error {
	g.mu.Lock()
	g.refs--
	done := g.refs == 0 && g.retired
	g.mu.Unlock()
	if done {
		return g.release()
	}
	return nil
}

// retire marks g replaced and drops the owner's reference.
func (g *nodeMem) retire() error {
	g.mu.Lock()
	g.retired = true
	g.mu.Unlock()
	return g.drop()
}

func (g *nodeMem) release() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		return nil
	}
	g.released = true
	var errs []error
	for _, r := range g.view.Load().regions {
		if err := r.Release(); err != nil {
			errs = append(errs, fmt.Errorf("tcp: releasing a region of node %d: %w", g.node, err))
		}
	}
	return errors.Join(errs...)
}

// sameShape reports whether g is the layout a hello asks for.
func (g *nodeMem) sameShape(h *hello) bool {
	v := g.view.Load()
	var main, device uint64
	for _, r := range v.layout.Regions {
		switch r.Name {
		case "main":
			main = r.Size
		case "device":
			device = r.Size
		}
	}
	return g.node == h.node && g.mode == h.mode && main == h.main && device == h.device
}
