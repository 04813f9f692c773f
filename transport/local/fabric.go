package local

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/internal/realtime"
	"github.com/dmbench/dmbench/transport/internal/wordmem"
)

// Fabric is the in-process, real-time fabric. Build it with New.
type Fabric struct {
	cfg   transport.Config
	start time.Time
	mem   wordmem.Memory
	nodes []*node

	// mu guards the cluster-changing calls and the run state, the
	// runner's included, so that setup code may add regions and clients
	// from several goroutines.
	mu        sync.Mutex
	regionIDs uint64 // regions made so far: the next region's id
	closed    bool
	runner    *realtime.Runner
}

// node is one machine of the cluster.
type node struct {
	id       transport.NodeID
	layout   transport.Layout
	mem      []*wordmem.Region // parallel to layout.Regions; nil once closed
	handlers map[uint16]transport.Handler
	// cores holds one endpoint per RPC core; a handler runs while its
	// caller holds one, which bounds the handlers running at once.
	cores chan *endpoint
}

// New builds the cluster cfg describes, with the chunk server registered
// on every memory node.
func New(cfg transport.Config) (*Fabric, error) {
	layouts, err := cfg.Layouts()
	if err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	f := &Fabric{cfg: cfg, start: time.Now(), mem: wordmem.NewMemory(cfg.Mode)}
	f.runner = realtime.NewRunner(realtime.RunnerConfig{Name: "local", Cluster: cfg, Lock: &f.mu, Start: f.start,
		NewClient: func(n transport.NodeID, thread int, seq uint64) realtime.FabricEndpoint {
			return f.newEndpoint(n, thread, seq, true)
		}})
	for _, l := range layouts {
		nd := &node{id: l.Node, layout: l, handlers: make(map[uint16]transport.Handler)}
		f.nodes = append(f.nodes, nd)
		for _, r := range l.Regions {
			m, err := f.newRegion(r.Size)
			if err != nil {
				return nil, errors.Join(fmt.Errorf("node %d: %w", l.Node, err), f.Close())
			}
			nd.mem = append(nd.mem, m)
		}
		cores := cfg.Cores(l.Node)
		nd.cores = make(chan *endpoint, cores)
		for c := range cores {
			ep := f.newEndpoint(l.Node, c, realtime.Stream(l.Node, realtime.HandlerThread, c), true)
			nd.cores <- ep
			f.runner.AddCore(ep)
		}
	}
	if err := transport.ServeChunks(f); err != nil {
		return nil, errors.Join(fmt.Errorf("local: %w", err), f.Close())
	}
	return f, nil
}

// newRegion makes the memory of a region; callers hold f.mu or own f.
func (f *Fabric) newRegion(size uint64) (*wordmem.Region, error) {
	r, err := wordmem.NewRegion(f.regionIDs, size)
	f.regionIDs++
	if err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	return r, nil
}

// Name is "local".
func (f *Fabric) Name() string { return "local" }

// Config is the cluster shape the fabric was built with.
func (f *Fabric) Config() transport.Config { return f.cfg }

func (f *Fabric) node(n transport.NodeID) (*node, error) {
	if int(n) >= len(f.nodes) {
		return nil, fmt.Errorf("local: node %d does not exist (nodes are 0-%d)", n, len(f.nodes)-1)
	}
	return f.nodes[n], nil
}

// Regions lists node n's regions in address order; nil for no such node.
func (f *Fabric) Regions(n transport.NodeID) []transport.Region {
	nd, err := f.node(n)
	if err != nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]transport.Region(nil), nd.layout.Regions...)
}

// Region returns node n's region called name.
func (f *Fabric) Region(n transport.NodeID, name string) (transport.Region, error) {
	nd, err := f.node(n)
	if err != nil {
		return transport.Region{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return nd.layout.Lookup(name)
}

// AddRegion registers a region of size bytes on node n, after its others.
func (f *Fabric) AddRegion(n transport.NodeID, name string, size uint64) (transport.Region, error) {
	nd, err := f.node(n)
	if err != nil {
		return transport.Region{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.runner.Running() {
		return transport.Region{}, fmt.Errorf("local: AddRegion %q on node %d during Run", name, n)
	}
	if f.closed {
		return transport.Region{}, fmt.Errorf("local: AddRegion %q on node %d: the fabric is closed", name, n)
	}
	m, err := f.newRegion(size)
	if err != nil {
		return transport.Region{}, err
	}
	r, err := nd.layout.Add(name, size, false)
	if err != nil {
		return transport.Region{}, errors.Join(err, m.Release())
	}
	nd.mem = append(nd.mem, m)
	return r, nil
}

// Handle registers h for method on node n. A node that does not exist is a
// programming error and panics, as Handle has no error to return.
func (f *Fabric) Handle(n transport.NodeID, method uint16, h transport.Handler) {
	nd, err := f.node(n)
	if err != nil {
		panic(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	nd.handlers[method] = h
}

// Setup returns an endpoint on node n whose verbs apply at once and count
// nothing. Like Handle, it panics for a node that does not exist.
func (f *Fabric) Setup(n transport.NodeID) transport.Endpoint {
	if _, err := f.node(n); err != nil {
		panic(err)
	}
	return f.newEndpoint(n, 0, realtime.Stream(n, realtime.SetupThread, 0), false)
}

// Close returns the memory of every region to the OS. It must not be
// called while Run is in progress; verbs issued afterwards fail.
func (f *Fabric) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for _, nd := range f.nodes {
		for _, m := range nd.mem {
			if err := m.Release(); err != nil {
				errs = append(errs, fmt.Errorf("local: releasing a region of node %d: %w", nd.id, err))
			}
		}
		nd.mem = nil
	}
	f.closed = true
	return errors.Join(errs...)
}
