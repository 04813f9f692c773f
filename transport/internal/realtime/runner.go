package realtime

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/internal/wordmem"
)

// RunnerConfig is what a Runner needs of its fabric.
type RunnerConfig struct {
	// Name is the fabric's name, which starts every error.
	Name    string
	Cluster transport.Config
	// Lock is the fabric's lock. It guards the runner's state too, so that
	// the fabric's cluster-changing calls exclude the start of a Run.
	Lock *sync.Mutex
	// Start is when the fabric was built: the first statistics window.
	Start time.Time
	// NewClient makes the counted endpoint of a client on thread of
	// compute node n that draws from random stream seq.
	NewClient func(n transport.NodeID, thread int, seq uint64) FabricEndpoint
	// Hosts, when set, says why compute node n cannot run clients in this
	// process (tcp: it runs in a process of its own), or nil.
	Hosts func(n transport.NodeID) error
	// Blocked, when set, says why no Run may start now (tcp: a handler no
	// server runs), or nil. It is called with Lock held.
	Blocked func() error
}

// Runner runs a fabric's clients: Go queues one for the next Run, Run
// starts the queued ones as goroutines and waits for them, and Attach
// hands one to a goroutine the caller runs. It keeps the counters of the
// clients that finished and of the fabric's RPC cores for Stats.
type Runner struct {
	cfg     RunnerConfig
	pending []*client // added by Go since the last Run
	clients int       // clients ever added: the next client's index
	goErr   error     // bad Go calls, reported by the next Run
	running bool
	stats   wordmem.Tally // finished clients' counters since the last reset
	window  time.Time     // start of the statistics window
	cores   []*Endpoint   // every RPC core's endpoint
}

// client is a body waiting for Run, with the endpoint it will run on.
type client struct {
	ep    FabricEndpoint
	index int // order of the Go call among all clients of the fabric
	body  func(transport.Endpoint)
}

// NewRunner is a runner with no clients yet.
func NewRunner(cfg RunnerConfig) *Runner {
	return &Runner{cfg: cfg, stats: wordmem.NewTally(cfg.Cluster), window: cfg.Start}
}

// AddCore has Stats count the verbs of an RPC core's endpoint.
func (r *Runner) AddCore(core FabricEndpoint) {
	r.cfg.Lock.Lock()
	defer r.cfg.Lock.Unlock()
	r.cores = append(r.cores, core.base())
}

// Running reports whether a Run is in progress; the caller holds the
// fabric's lock.
func (r *Runner) Running() bool { return r.running }

// Go adds a client on thread of compute node n; it starts at the next Run.
// A node that is not a compute node or a thread that does not exist makes
// that Run fail without running anything.
func (r *Runner) Go(n transport.NodeID, thread int, body func(transport.Endpoint)) {
	r.cfg.Lock.Lock()
	defer r.cfg.Lock.Unlock()
	if err := r.check(n, thread); err != nil {
		r.goErr = errors.Join(r.goErr, err)
		return
	}
	ep := r.cfg.NewClient(n, thread, Stream(n, thread, r.clients))
	r.pending = append(r.pending, &client{ep: ep, index: r.clients, body: body})
	r.clients++
}

func (r *Runner) check(n transport.NodeID, thread int) error {
	c := &r.cfg.Cluster
	if int(n) >= c.NodeCount() || c.Role(n) != transport.RoleCompute {
		return fmt.Errorf("%s: Go on node %d: clients run on compute nodes %v", r.cfg.Name, n, c.ComputeNodeIDs())
	}
	if r.cfg.Hosts != nil {
		if err := r.cfg.Hosts(n); err != nil {
			return err
		}
	}
	if thread < 0 || thread >= c.Threads {
		return fmt.Errorf("%s: Go on node %d thread %d: threads are 0-%d", r.cfg.Name, n, thread, c.Threads-1)
	}
	return nil
}

// Attach returns an endpoint on thread of compute node n for a goroutine
// the caller runs itself, outside Go and Run. The endpoint's counters join
// Stats when the returned detach function is called, after its last verb.
func (r *Runner) Attach(n transport.NodeID, thread int) (transport.Endpoint, func(), error) {
	r.cfg.Lock.Lock()
	defer r.cfg.Lock.Unlock()
	if err := r.check(n, thread); err != nil {
		return nil, nil, err
	}
	ep := r.cfg.NewClient(n, thread, Stream(n, thread, r.clients))
	r.clients++
	detach := func() {
		r.cfg.Lock.Lock()
		defer r.cfg.Lock.Unlock()
		b := ep.base()
		r.stats.Add(b.node, b.stats)
		b.stats = &transport.VerbStats{}
	}
	return ep, detach, nil
}

// Run starts every client added since the last Run as a goroutine and waits
// for all of them. A panicking client ends with an error holding the panic
// value and its stack; Run returns the first such error once every other
// client has finished. Run may be called again with new clients.
func (r *Runner) Run() error {
	r.cfg.Lock.Lock()
	if r.running {
		r.cfg.Lock.Unlock()
		return fmt.Errorf("%s: Run called while another Run is in progress", r.cfg.Name)
	}
	clients, err := r.pending, r.goErr
	if r.cfg.Blocked != nil {
		err = errors.Join(err, r.cfg.Blocked())
	}
	r.pending, r.goErr = nil, nil
	if err != nil {
		r.cfg.Lock.Unlock()
		return err
	}
	r.running = true
	r.cfg.Lock.Unlock()

	var g errgroup.Group
	for _, c := range clients {
		g.Go(func() error { return r.run(c) })
	}
	first := g.Wait()

	r.cfg.Lock.Lock()
	defer r.cfg.Lock.Unlock()
	for _, c := range clients {
		b := c.ep.base()
		r.stats.Add(b.node, b.stats)
	}
	r.running = false
	return first
}

// run calls c's body, turning a panic into an error.
func (r *Runner) run(c *client) (err error) {
	defer func() {
		if p := recover(); p != nil {
			b := c.ep.base()
			err = fmt.Errorf("%s: client %d on node %d thread %d panicked: %v\n%s", r.cfg.Name, c.index, b.node, b.thread, p, debug.Stack())
		}
	}()
	c.body(c.ep)
	return nil
}

// Stats returns the counters of every client finished since the last
// ResetStats and of every RPC core. Call it between runs only: endpoints
// count without synchronisation while Run is in progress.
func (r *Runner) Stats() transport.Stats {
	r.cfg.Lock.Lock()
	defer r.cfg.Lock.Unlock()
	t := wordmem.NewTally(r.cfg.Cluster)
	t.Merge(&r.stats)
	for _, core := range r.cores {
		t.Add(core.node, core.stats)
	}
	return transport.Stats{WindowNs: time.Since(r.window).Nanoseconds(), Verbs: t.Verbs, Nodes: t.Nodes}
}

// ResetStats zeroes every counter and starts a new window. Like Stats, it
// must not be called while Run is in progress.
func (r *Runner) ResetStats() {
	r.cfg.Lock.Lock()
	defer r.cfg.Lock.Unlock()
	r.stats = wordmem.NewTally(r.cfg.Cluster)
	for _, core := range r.cores {
		*core.stats = transport.VerbStats{}
	}
	r.window = time.Now()
}
