package tcp

import (
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/internal/realtime"
)

// Options says where a fabric's memory nodes run.
type Options struct {
	// MemNodes are the host:port addresses of running memory-node servers
	// (dmbench memnode), one per memory node in node-id order. Empty
	// starts the memory nodes' servers in this process on loopback.
	MemNodes []string
	// Key is the cluster key the servers were started with. Empty, with
	// servers in this process, draws a random one.
	Key []byte
	// Conns is the number of connections to each node's server that the
	// clients of this process share (0: 1). One connection keeps the most
	// verbs in each write; more spread the work of a node's server over
	// more of its goroutines.
	Conns int
	// Keep uses the memory the memory-node servers hold when its layout
	// is the one asked for (go-ycsb's run after its load); otherwise every
	// fabric starts from zeroed memory.
	Keep bool
	// Compute, when not nil, lists the compute nodes this process runs
	// (dmbench computenode): the others are processes of their own. It
	// needs MemNodes and Key, and Peers.
	Compute []transport.NodeID
	// Listen is where the servers of this process's compute nodes listen
	// ("": 127.0.0.1 on a free port). Give a reachable host:port when
	// other processes run compute nodes.
	Listen string
	// Peers, with Compute, is called once this process's compute-node
	// servers listen, with their addresses, and returns every compute
	// node's server address in the order of Config.ComputeNodeIDs: the
	// exchange a rendezvous does.
	Peers func(own map[transport.NodeID]string) ([]string, error)
}

// Fabric is the tcp fabric: every node's regions are served by a Server,
// reached over TCP even from this process. Compute nodes run in this
// process, with their own servers on loopback; memory nodes run in this
// process too or in dmbench memnode processes (Options.MemNodes). Build it
// with New.
type Fabric struct {
	cfg   transport.Config
	opt   Options
	start time.Time
	nodes []*node
	peers []*peer // by node id: what every endpoint of this process uses

	// mu guards the cluster-changing calls and the run state, the
	// runner's included, as in the local fabric.
	mu sync.Mutex
	// unserved are Handle calls on memory nodes in other processes, by
	// node and method, until Install has the node serve the method.
	unserved  map[transport.NodeID]map[uint16]error
	closed    bool
	setupSeqs int // Setup endpoints made: the next one's stream
	runner    *realtime.Runner
}

// node is one node of the cluster as this process sees it.
type node struct {
	id      transport.NodeID
	srv     *Server     // nil for a memory node in another process
	coreEPs []*endpoint // given the peers once every server listens
}

// New builds the cluster cfg describes: a server on loopback for each
// compute node (and each memory node, unless opt names running ones), and
// connections to every node's server. Memory nodes serve the chunk
// allocator (transport.MethodAllocChunk) themselves.
func New(cfg transport.Config, opt Options) (*Fabric, error) {
	layouts, err := cfg.Layouts()
	if err != nil {
		return nil, fmt.Errorf("tcp: %w", err)
	}
	if n := len(opt.MemNodes); n > 0 && n != cfg.MemoryNodes {
		return nil, fmt.Errorf("tcp: %d memory-node addresses %v for %d memory nodes", n, opt.MemNodes, cfg.MemoryNodes)
	}
	if len(opt.MemNodes) > 0 && len(opt.Key) == 0 {
		return nil, errors.New("tcp: memory nodes in other processes need the cluster key they were started with")
	}
	if len(opt.Key) == 0 {
		opt.Key = make([]byte, 32)
		if _, err := crand.Read(opt.Key); err != nil {
			return nil, fmt.Errorf("tcp: drawing a cluster key: %w", err)
		}
	}
	if err := opt.checkCompute(cfg); err != nil {
		return nil, err
	}
	opt.Conns = max(opt.Conns, 1)
	f := &Fabric{cfg: cfg, opt: opt, start: time.Now()}
	f.runner = realtime.NewRunner(realtime.RunnerConfig{Name: "tcp", Cluster: cfg, Lock: &f.mu, Start: f.start,
		NewClient: func(n transport.NodeID, thread int, seq uint64) realtime.FabricEndpoint {
			return f.newEndpoint(n, thread, seq, true, f.nodes[n].srv)
		},
		Hosts: func(n transport.NodeID) error {
			if !f.hosts(n) {
				return fmt.Errorf("tcp: Go on node %d: the compute node runs in another process; this one runs %v", n, f.opt.Compute)
			}
			return nil
		},
		Blocked: f.unservedErr})
	fail := func(err error) (*Fabric, error) { return nil, errors.Join(err, f.Close()) }
	addrs := make([]string, len(layouts))
	for _, l := range layouts {
		nd := &node{id: l.Node}
		f.nodes = append(f.nodes, nd)
		memory := cfg.Role(l.Node) == transport.RoleMemory
		if memory && len(opt.MemNodes) > 0 {
			addrs[l.Node] = opt.MemNodes[l.Node]
			continue
		}
		if !memory && !f.hosts(l.Node) {
			continue // a compute node of another process: Peers gives its address
		}
		listen := "127.0.0.1:0"
		if !memory && opt.Listen != "" {
			listen = opt.Listen
		}
		if addrs[l.Node], err = f.startServer(nd, l, memory, listen); err != nil {
			return fail(err)
		}
	}
	if opt.Compute != nil {
		own := map[transport.NodeID]string{}
		for _, n := range opt.Compute {
			own[n] = addrs[n]
		}
		all, err := opt.Peers(own)
		if err != nil {
			return fail(fmt.Errorf("tcp: exchanging compute-node addresses: %w", err))
		}
		ids := cfg.ComputeNodeIDs()
		if len(all) != len(ids) {
			return fail(fmt.Errorf("tcp: the exchange gave %d compute-node addresses for %d compute nodes", len(all), len(ids)))
		}
		for i, n := range ids {
			if addrs[n] == "" {
				addrs[n] = all[i]
			}
		}
	}
	f.peers = make([]*peer, len(layouts))
	for i, l := range layouts {
		if f.peers[i], err = f.connect(l, addrs[i]); err != nil {
			return fail(err)
		}
	}
	for _, nd := range f.nodes {
		for _, ep := range nd.coreEPs {
			ep.peers = f.peers
		}
	}
	return f, nil
}

// hosts reports whether compute node n runs in this process.
func (f *Fabric) hosts(n transport.NodeID) bool {
	return f.opt.Compute == nil || slices.Contains(f.opt.Compute, n)
}

// checkCompute checks the options of a process that runs some of the
// compute nodes.
func (o *Options) checkCompute(cfg transport.Config) error {
	if o.Compute == nil {
		return nil
	}
	if len(o.MemNodes) == 0 || o.Peers == nil {
		return errors.New("tcp: compute nodes in processes of their own need the memory nodes' addresses and an address exchange (a rendezvous)")
	}
	if len(o.Compute) == 0 {
		return errors.New("tcp: a compute-node process runs at least one compute node")
	}
	for _, n := range o.Compute {
		if int(n) >= cfg.NodeCount() || cfg.Role(n) != transport.RoleCompute {
			return fmt.Errorf("tcp: node %d is not a compute node (compute nodes are %v)", n, cfg.ComputeNodeIDs())
		}
	}
	return nil
}

// startServer starts the server of node nd, laid out as l, on listen.
func (f *Fabric) startServer(nd *node, l transport.Layout, memory bool, listen string) (string, error) {
	srv, err := NewServer(ServerConfig{Key: f.opt.Key, Cores: f.cfg.Cores(nd.id),
		NewCore: func(s *Server, core int) transport.Endpoint {
			ep := f.newEndpoint(nd.id, core, realtime.Stream(nd.id, realtime.HandlerThread, core), true, s)
			nd.coreEPs = append(nd.coreEPs, ep)
			f.runner.AddCore(ep)
			return ep
		}})
	if err != nil {
		return "", err
	}
	nd.srv = srv
	main, device := regionSize(l, "main"), regionSize(l, "device")
	if err := srv.Configure(nd.id, f.cfg.Mode, main, device, memory, true); err != nil {
		return "", fmt.Errorf("tcp: node %d: %w", nd.id, err)
	}
	return srv.Listen(listen)
}

func regionSize(l transport.Layout, name string) uint64 {
	r, err := l.Lookup(name)
	if err != nil {
		return 0
	}
	return r.Size
}

// connect opens the connections to node l.Node's server at addr. A
// memory node in another process is asked for l's layout by the first
// connection (fresh memory unless Options.Keep); its welcome must match.
func (f *Fabric) connect(l transport.Layout, addr string) (*peer, error) {
	p := &peer{node: l.Node, addr: addr}
	// A memory node in a process of its own is told its layout; a compute
	// node in one has its own and says what it holds.
	remote := f.nodes[l.Node].srv == nil && f.cfg.Role(l.Node) == transport.RoleMemory
	for i := range f.opt.Conns {
		h := hello{node: l.Node, mode: f.cfg.Mode, configure: remote,
			fresh: remote && i == 0 && !f.opt.Keep,
			main:  regionSize(l, "main"), device: regionSize(l, "device")}
		c, wel, err := dial(p, f.opt.Key, h)
		if err != nil {
			p.close()
			return nil, err
		}
		p.conns = append(p.conns, c)
		if i > 0 {
			continue
		}
		got := transport.Layout{Node: l.Node, Regions: wel.regions}
		p.layout.Store(&got)
		p.cores = int(wel.cores)
		if wel.node != l.Node || wel.mode != f.cfg.Mode {
			p.close()
			return nil, fmt.Errorf("tcp: node %d at %s serves node %d in %s mode, want node %d in %s mode", l.Node, addr, wel.node, wel.mode, l.Node, f.cfg.Mode)
		}
		if remote && p.cores != f.cfg.MemoryCores {
			p.close()
			return nil, fmt.Errorf("tcp: memory node %d at %s runs handlers on %d cores, the cluster config says %d: start it with --cores %d or set the memory cores to %d",
				l.Node, addr, p.cores, f.cfg.MemoryCores, f.cfg.MemoryCores, p.cores)
		}
	}
	return p, nil
}

// newEndpoint makes an endpoint on node n that reports thread and draws
// from random stream seq; counted endpoints keep stats. self is node n's
// server when it runs in this process.
func (f *Fabric) newEndpoint(n transport.NodeID, thread int, seq uint64, counted bool, self *Server) *endpoint {
	return &endpoint{
		Endpoint: realtime.NewEndpoint(n, thread, f.cfg.Seed, seq, f.start, counted),
		peers:    f.peers,
		self:     self,
		conn:     int(seq),
	}
}

// Name is "tcp".
func (f *Fabric) Name() string { return "tcp" }

// Config is the cluster shape the fabric was built with.
func (f *Fabric) Config() transport.Config { return f.cfg }

// Addrs lists every node's server address, by node id.
func (f *Fabric) Addrs() []string {
	out := make([]string, len(f.peers))
	for i, p := range f.peers {
		out[i] = p.addr
	}
	return out
}

func (f *Fabric) node(n transport.NodeID) (*node, error) {
	if int(n) >= len(f.nodes) {
		return nil, fmt.Errorf("tcp: node %d does not exist (nodes are 0-%d)", n, len(f.nodes)-1)
	}
	return f.nodes[n], nil
}

// Regions lists node n's regions in address order; nil for no such node.
func (f *Fabric) Regions(n transport.NodeID) []transport.Region {
	if _, err := f.node(n); err != nil {
		return nil
	}
	return append([]transport.Region(nil), f.peers[n].layout.Load().Regions...)
}

// Region returns node n's region called name. A compute node's regions
// may have been added by another process (an index's compute-node
// regions, added by the compute node that built it): a name this process
// has not seen is looked up again at the node's server.
func (f *Fabric) Region(n transport.NodeID, name string) (transport.Region, error) {
	if _, err := f.node(n); err != nil {
		return transport.Region{}, err
	}
	rg, err := f.peers[n].layout.Load().Lookup(name)
	if err != nil && f.cfg.Role(n) == transport.RoleCompute {
		if rerr := f.refresh(n); rerr != nil {
			return transport.Region{}, errors.Join(err, rerr)
		}
		rg, err = f.peers[n].layout.Load().Lookup(name)
	}
	return rg, err
}

// refresh reloads node n's layout from its server.
func (f *Fabric) refresh(n transport.NodeID) error {
	p := f.peers[n]
	if srv := f.nodes[n].srv; srv != nil {
		l := srv.mem().view.Load().layout
		p.layout.Store(&l)
		return nil
	}
	cl := newCall()
	if err := p.conn(0).roundTrip(cl, appendLayout); err != nil {
		return fmt.Errorf("tcp: reading node %d's layout: %w", n, err)
	}
	wel, err := decodeWelcome(cl.payload)
	if err != nil {
		return fmt.Errorf("tcp: node %d's layout: %w", n, err)
	}
	p.layout.Store(&transport.Layout{Node: n, Regions: wel.regions})
	return nil
}

// AddRegion registers a region of size bytes on node n, after its others,
// in the node's server.
func (f *Fabric) AddRegion(n transport.NodeID, name string, size uint64) (transport.Region, error) {
	nd, err := f.node(n)
	if err != nil {
		return transport.Region{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.runner.Running() {
		return transport.Region{}, fmt.Errorf("tcp: AddRegion %q on node %d during Run", name, n)
	}
	if f.closed {
		return transport.Region{}, fmt.Errorf("tcp: AddRegion %q on node %d: the fabric is closed", name, n)
	}
	p := f.peers[n]
	var rg transport.Region
	if nd.srv != nil {
		rg, err = nd.srv.mem().addRegion(name, size, false)
	} else {
		cl := newCall()
		err = p.conn(0).roundTrip(cl, func(b []byte, id uint64) []byte { return appendAddRegion(b, id, name, size) })
		if err == nil {
			rg, err = decodeRegionReply(cl.payload, n)
		}
	}
	if err != nil {
		return transport.Region{}, fmt.Errorf("tcp: AddRegion %q on node %d: %w", name, n, err)
	}
	old := p.layout.Load()
	next := &transport.Layout{Node: n, Regions: append(append([]transport.Region(nil), old.Regions...), rg)}
	p.layout.Store(next)
	return rg, nil
}

// Handle registers h for method on node n's server. A handler is Go code,
// so it can run only where the node's server does: Handle on a memory node
// in another process makes the next Run fail, naming the method. A node
// that does not exist is a programming error and panics, as Handle has no
// error to return.
func (f *Fabric) Handle(n transport.NodeID, method uint16, h transport.Handler) {
	nd, err := f.node(n)
	if err != nil {
		panic(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if nd.srv == nil && f.cfg.Role(n) == transport.RoleCompute {
		return // the compute node's own process registers its handlers
	}
	if nd.srv == nil {
		if f.unserved == nil {
			f.unserved = map[transport.NodeID]map[uint16]error{}
		}
		if f.unserved[n] == nil {
			f.unserved[n] = map[uint16]error{}
		}
		f.unserved[n][method] = fmt.Errorf("tcp: the handler for method %#04x on memory node %d cannot run there: the node is a process of its own (%s), and nothing installed it (indexes.Spec.Offload)", method, n, f.peers[n].addr)
		return
	}
	nd.srv.Handle(method, h)
}

// Setup returns an endpoint on node n whose verbs apply at once and count
// nothing. Like Handle, it panics for a node that does not exist.
func (f *Fabric) Setup(n transport.NodeID) transport.Endpoint {
	nd, err := f.node(n)
	if err != nil {
		panic(err)
	}
	f.mu.Lock()
	seq := f.setupSeqs
	f.setupSeqs++
	f.mu.Unlock()
	ep := f.newEndpoint(n, 0, realtime.Stream(n, realtime.SetupThread, 0), false, nd.srv)
	ep.conn = seq
	return ep
}

// Close cuts every connection and stops the servers this process runs,
// returning their memory to the OS. It must not be called while Run is in
// progress; verbs issued afterwards fail.
func (f *Fabric) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	for _, p := range f.peers {
		if p != nil {
			p.close()
		}
	}
	var errs []error
	for _, nd := range f.nodes {
		if nd.srv != nil {
			if err := nd.srv.Close(); err != nil {
				errs = append(errs, fmt.Errorf("tcp: node %d: %w", nd.id, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Install has memory node n, when it runs in a process of its own, make
// and serve the memory-node handlers of index from args
// (indexes.Installer): the Handle calls for the methods it serves are
// then served. A node whose server runs in this process has them from
// Handle already.
func (f *Fabric) Install(n transport.NodeID, index string, args []byte) error {
	nd, err := f.node(n)
	if err != nil {
		return err
	}
	if nd.srv != nil || f.cfg.Role(n) != transport.RoleMemory {
		return nil
	}
	cl := newCall()
	if err := f.peers[n].conn(0).roundTrip(cl, func(b []byte, id uint64) []byte { return appendInstall(b, id, index, args) }); err != nil {
		return fmt.Errorf("tcp: installing %s's handlers on memory node %d at %s: %w", index, n, f.peers[n].addr, err)
	}
	if len(cl.payload)%2 != 0 {
		return fmt.Errorf("tcp: memory node %d answered an install with %d bytes, not a list of methods", n, len(cl.payload))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for p := cl.payload; len(p) > 0; p = p[2:] {
		delete(f.unserved[n], binary.LittleEndian.Uint16(p))
	}
	return nil
}

// unservedErr joins the Handle calls no server runs, in node and method
// order.
func (f *Fabric) unservedErr() error {
	var errs []error
	for _, n := range slices.Sorted(maps.Keys(f.unserved)) {
		for _, m := range slices.Sorted(maps.Keys(f.unserved[n])) {
			errs = append(errs, f.unserved[n][m])
		}
	}
	return errors.Join(errs...)
}
