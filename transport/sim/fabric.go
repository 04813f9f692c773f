package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/internal/regionmem"
)

// psPerNs converts the public nanosecond clock to the internal picosecond
// one: a 60 Mops NIC serves a message every 16.667 ns, and rounding that to
// whole nanoseconds would shift the modelled ceiling by 2%.
const psPerNs = 1000

// resource is a FIFO server with a next-free time: a core, whose work is
// always reserved from the present on. NIC resources are timelines.
type resource struct {
	free int64 // ps
	busy int64 // ps of service reserved since the last reset
}

// serve reserves svc ps starting no earlier than at and returns the end.
func (r *resource) serve(at, svc int64) int64 {
	s := max(at, r.free)
	r.free = s + svc
	r.busy += svc
	return r.free
}

// thread is a core running clients (or, on a serving node, RPC handlers).
// Its clients' verbs are counted here rather than per client: a quarter as
// many 2 KB counter blocks compete for the cache at 4 coroutines a thread.
type thread struct {
	cpu   resource
	qps   []qp // per target node
	stats transport.VerbStats
}

// qp is the requester side of an RC QP: it bounds READ/atomic verbs in
// flight and keeps the ops that wait for a slot in posting order.
type qp struct {
	outstanding int
	waiting     fifo[opRef]
	torn        []int32 // torn WRITEs from this QP whose second half is pending
	// executing is when the QP's last atomic executes at its responder;
	// the QP's later requests wait for it there.
	executing int64
}

// opRef is an op waiting for its QP, with its kind, so that the
// completion that starts it need not touch the op (a cache miss by then)
// but for a WRITE's length.
type opRef struct {
	ep   *endpoint
	idx  int32
	kind transport.VerbKind
}

// node is one machine: memory, NIC resources, cores.
type node struct {
	id      transport.NodeID
	role    transport.Role
	layout  transport.Layout
	mem     [][]byte // per region
	release []func() error
	nic     timeline // message processing
	tx, rx  timeline // link, each direction
	atomics timeline // all-address atomic ceiling
	// perAddr holds the next-free time of each 8-byte address with
	// atomics in flight; entries in the past are pruned.
	perAddr  map[transport.GAddr]int64
	handlers map[uint16]transport.Handler
	threads  []*thread // client threads (compute nodes)
	cores    []*endpoint
	idle     fifo[*endpoint] // cores parked with nothing to serve
	queue    fifo[*rpcReq]   // requests waiting for a core
	stats    transport.NodeStats
}

// Fabric is the deterministic virtual-time fabric.
type Fabric struct {
	cfg     transport.Config
	prof    Profile
	nodes   []*node
	events  eventQueue
	now     int64 // ps
	hash    uint64
	nevents uint64
	rng     *rand.Rand // the fabric's own draws (strict-mode tearing)

	clients []*endpoint // every client ever added, in Go order
	pending []*endpoint // added since the last Run
	live    int         // clients started and not finished
	torn    []tornWrite
	free    []int32 // free torn-write slots
	failure error
	running bool
	resetAt int64

	// derived per-op costs, ps
	msgSvc, byteSvc              int64
	atomicHost, atomicDevice     int64
	atomicNode                   int64
	postCost, nicTx, wire, nicRx int64
	memRead, nicComp, recv       int64
	localAccess                  int64
	localPerByte                 float64
}

// New builds a fabric for cluster cfg on hardware profile prof.
func New(cfg transport.Config, prof Profile) (*Fabric, error) {
	if err := prof.Validate(); err != nil {
		return nil, err
	}
	layouts, err := cfg.Layouts()
	if err != nil {
		return nil, err
	}
	f := &Fabric{
		cfg:          cfg,
		prof:         prof,
		rng:          rand.New(rand.NewPCG(cfg.Seed, 0x5eed_f00d)),
		hash:         14695981039346656037,
		msgSvc:       psRate(prof.MsgRate),
		byteSvc:      psRate(prof.LineRate),
		atomicHost:   psRate(prof.AtomicRateHost),
		atomicDevice: psRate(prof.AtomicRateDevice),
		postCost:     ps(prof.PostNs),
		nicTx:        ps(prof.NICTxNs),
		wire:         ps(prof.WireNs),
		nicRx:        ps(prof.NICRxNs),
		memRead:      ps(prof.MemReadNs),
		nicComp:      ps(prof.NICCompNs),
		recv:         ps(prof.RecvNs),
		localAccess:  ps(prof.LocalAccessNs),
		localPerByte: psPerNs / prof.LocalBytesPerNs,
	}
	if prof.AtomicRateNode > 0 {
		f.atomicNode = psRate(prof.AtomicRateNode)
	}
	for i := range layouts {
		l := layouts[i]
		n := &node{
			id:       l.Node,
			role:     cfg.Role(l.Node),
			layout:   l,
			perAddr:  make(map[transport.GAddr]int64),
			handlers: make(map[uint16]transport.Handler),
		}
		f.nodes = append(f.nodes, n)
		for _, r := range l.Regions {
			if err := n.addMemory(r.Size); err != nil {
				f.Close()
				return nil, err
			}
		}
		if n.role == transport.RoleCompute {
			for range cfg.Threads {
				n.threads = append(n.threads, f.newThread())
			}
		}
		n.stats = transport.NodeStats{ID: n.id, Role: n.role, Cores: cfg.Cores(n.id), Threads: len(n.threads)}
	}
	if err := transport.ServeChunks(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (f *Fabric) newThread() *thread {
	return &thread{qps: make([]qp, f.cfg.NodeCount())}
}

// ps converts nanoseconds to picoseconds.
func ps(ns float64) int64 { return int64(ns*psPerNs + 0.5) }

// psRate is the service time in ps of one unit at rate units per second.
func psRate(perSecond float64) int64 { return int64(1e12/perSecond + 0.5) }

// Name is "sim".
func (f *Fabric) Name() string { return "sim" }

// Config is the cluster shape.
func (f *Fabric) Config() transport.Config { return f.cfg }

// Profile is the hardware model.
func (f *Fabric) Profile() Profile { return f.prof }

// Now is the virtual time in ns.
func (f *Fabric) Now() int64 { return f.now / psPerNs }

// EventHash is a hash of every event processed so far (time, kind and
// coroutine, and for a verb its address, kind and size, for an RPC its
// server, method and request size): two runs with the same config and
// seed have equal hashes, and runs that touch different addresses differ.
func (f *Fabric) EventHash() uint64 { return f.hash }

// Events is the number of events processed so far.
func (f *Fabric) Events() uint64 { return f.nevents }

func (f *Fabric) node(n transport.NodeID) (*node, error) {
	if int(n) >= len(f.nodes) {
		return nil, fmt.Errorf("sim: node %d does not exist (nodes are 0-%d)", n, len(f.nodes)-1)
	}
	return f.nodes[n], nil
}

// Regions lists a node's regions.
func (f *Fabric) Regions(n transport.NodeID) []transport.Region {
	nd, err := f.node(n)
	if err != nil {
		return nil
	}
	return append([]transport.Region(nil), nd.layout.Regions...)
}

// Region returns a node's region by name.
func (f *Fabric) Region(n transport.NodeID, name string) (transport.Region, error) {
	nd, err := f.node(n)
	if err != nil {
		return transport.Region{}, err
	}
	return nd.layout.Lookup(name)
}

// AddRegion registers another region on node n.
func (f *Fabric) AddRegion(n transport.NodeID, name string, size uint64) (transport.Region, error) {
	nd, err := f.node(n)
	if err != nil {
		return transport.Region{}, err
	}
	if f.running {
		return transport.Region{}, errors.New("sim: AddRegion during Run")
	}
	r, err := nd.layout.Add(name, size, false)
	if err != nil {
		return r, err
	}
	if err := nd.addMemory(size); err != nil {
		return transport.Region{}, err
	}
	return r, nil
}

// addMemory backs the node's newest region with size zeroed bytes.
func (nd *node) addMemory(size uint64) error {
	b, release, err := regionmem.Alloc(size)
	if err != nil {
		return fmt.Errorf("sim: node %d: %w", nd.id, err)
	}
	nd.mem = append(nd.mem, b)
	nd.release = append(nd.release, release)
	return nil
}

// Handle registers h for method on node n.
func (f *Fabric) Handle(n transport.NodeID, method uint16, h transport.Handler) {
	nd, err := f.node(n)
	if err != nil {
		panic(err)
	}
	nd.handlers[method] = h
}

// Setup returns an endpoint whose verbs take effect at once.
func (f *Fabric) Setup(n transport.NodeID) transport.Endpoint {
	nd, err := f.node(n)
	if err != nil {
		panic(err)
	}
	return &setupEndpoint{f: f, node: nd, rng: rand.New(rand.NewPCG(f.cfg.Seed, uint64(n)<<32|0xffff_ffff))}
}

// Go adds a client running body on thread of compute node n.
func (f *Fabric) Go(n transport.NodeID, th int, body func(transport.Endpoint)) {
	nd, err := f.node(n)
	if err == nil && nd.role != transport.RoleCompute {
		err = fmt.Errorf("sim: node %d is a memory node; clients run on compute nodes %v", n, f.cfg.ComputeNodeIDs())
	}
	if err == nil && (th < 0 || th >= len(nd.threads)) {
		err = fmt.Errorf("sim: thread %d does not exist on node %d (threads are 0-%d)", th, n, len(nd.threads)-1)
	}
	if err != nil {
		f.failure = errors.Join(f.failure, err)
		return
	}
	ep := f.newEndpoint(nd, nd.threads[th], th, len(f.clients))
	ep.body = body
	f.clients = append(f.clients, ep)
	f.pending = append(f.pending, ep)
}

// Run runs every client added since the last Run to completion.
func (f *Fabric) Run() error {
	if err := f.failure; err != nil {
		f.failure = nil
		f.pending = nil
		return err
	}
	f.running = true
	defer func() { f.running = false }()
	f.startCores()
	for _, ep := range f.pending {
		ep.startCoroutine(ep.body)
		f.live++
		f.schedule(f.now, evResume, ep, 0)
	}
	f.pending = nil
	for f.live > 0 && f.failure == nil {
		if f.events.len() == 0 {
			f.failure = fmt.Errorf("sim: deadlock at %d ns: %d clients parked with no event pending", f.Now(), f.live)
			break
		}
		f.step()
	}
	err := f.failure
	f.failure = nil
	if err != nil {
		f.abandon()
	}
	return err
}

// abandon stops every coroutine after a failed run, so no goroutine leaks
// and the fabric can still be closed.
func (f *Fabric) abandon() {
	for _, ep := range f.clients {
		ep.stopCoroutine()
	}
	f.clients = f.clients[:0]
	f.live = 0
	f.events.reset()
	for _, nd := range f.nodes {
		for _, c := range nd.cores {
			c.stopCoroutine()
		}
		nd.cores = nil
		nd.idle.reset()
		nd.queue.reset()
	}
}

// step processes one event.
func (f *Fabric) step() {
	e := f.events.pop()
	f.now = e.t
	f.nevents++
	f.fold(uint64(e.t))
	var id uint32
	if e.ep != nil {
		id = e.ep.id
	}
	f.fold(uint64(e.kind())<<32 | uint64(id))
	switch e.kind() {
	case evResume:
		e.ep.resume()
	case evArrive:
		op := &e.ep.ops[e.idx]
		f.fold(uint64(op.Addr))
		f.fold(uint64(op.Kind)<<56 | op.Len())
		f.arrive(e.ep, e.idx)
	case evComplete:
		f.complete(e.ep, e.idx, e.info&infoRA != 0, transport.NodeID(e.info>>16))
	case evRPC:
		f.fold(uint64(e.ep.rpc.target.id)<<48 | uint64(e.ep.rpc.method)<<32 | uint64(len(e.ep.rpc.req)))
		f.rpcArrive(e.ep)
	case evTorn:
		f.finishTorn(e.idx)
	case evExecute:
		f.execute(e.ep, e.idx)
	}
}

// fold mixes v into the event hash (FNV-1a over 64-bit words).
func (f *Fabric) fold(v uint64) { f.hash = (f.hash ^ v) * 1099511628211 }

func (f *Fabric) schedule(t int64, kind uint8, ep *endpoint, idx int32) {
	f.events.push(event{t: t, ep: ep, idx: idx, info: uint32(kind)})
}

// Stats returns the counters since the last reset.
func (f *Fabric) Stats() transport.Stats {
	s := transport.Stats{
		WindowNs: (f.now - f.resetAt) / psPerNs,
		Profile:  f.prof.Name,
		MsgRate:  f.prof.MsgRate,
		LineRate: f.prof.LineRate,
	}
	s.Verbs.ByNode = make([]transport.Counters, len(f.nodes))
	for _, nd := range f.nodes {
		for _, t := range nd.threads {
			s.Verbs.Merge(&t.stats)
		}
		for _, c := range nd.cores {
			s.Verbs.Merge(&c.thread.stats)
		}
		ns := nd.stats
		ns.MsgBusyNs = nd.nic.busy / psPerNs
		ns.TxBusyNs = nd.tx.busy / psPerNs
		ns.RxBusyNs = nd.rx.busy / psPerNs
		for _, c := range nd.cores {
			ns.CPUBusyNs += c.thread.cpu.busy / psPerNs
		}
		for _, t := range nd.threads {
			ns.ThreadBusyNs += t.cpu.busy / psPerNs
		}
		s.Nodes = append(s.Nodes, ns)
	}
	return s
}

// ResetStats zeroes every counter and starts a new window.
func (f *Fabric) ResetStats() {
	f.resetAt = f.now
	for _, nd := range f.nodes {
		nd.stats = transport.NodeStats{ID: nd.id, Role: nd.role, Cores: nd.stats.Cores, Threads: nd.stats.Threads}
		nd.nic.busy, nd.tx.busy, nd.rx.busy = 0, 0, 0
		for _, c := range nd.cores {
			c.thread.stats = transport.VerbStats{}
			c.thread.cpu.busy = 0
		}
		for _, t := range nd.threads {
			t.stats = transport.VerbStats{}
			t.cpu.busy = 0
		}
	}
}

// Close stops the RPC cores and releases the memory. The fabric must not
// be used afterwards.
func (f *Fabric) Close() error {
	f.abandon()
	var errs []error
	for _, nd := range f.nodes {
		for _, rel := range nd.release {
			errs = append(errs, rel())
		}
		nd.mem, nd.release = nil, nil
	}
	return errors.Join(errs...)
}
