//go:build linux && cgo && rdma

package verbs

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/internal/wordmem"
	"github.com/dmbench/dmbench/transport/tcp"
)

// Fabric is the verbs fabric: the tcp fabric's processes and control
// plane, with the one-sided verbs to memory nodes on RC QPs. Build it
// with New.
type Fabric struct {
	tcp *tcp.Fabric
	h   *hca

	mu      sync.Mutex // guards the fields below, as in the tcp fabric
	pending []*client
	goErr   error
	running bool
	closed  bool
	eps     []*endpoint // every endpoint made, closed with the fabric
	stats   wordmem.Tally
}

// client is a body waiting for Run.
type client struct {
	n      transport.NodeID
	thread int
	body   func(transport.Endpoint)
}

// New opens the device first, so a host without one fails at once with
// ErrNoDevice, then builds the tcp fabric that carries the control plane.
func New(cfg transport.Config, opt Options) (transport.Fabric, error) {
	h, err := openHCA(opt.HCA)
	if err != nil {
		return nil, err
	}
	tf, err := tcp.New(cfg, opt.TCP)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("verbs: control plane: %w", err), h.close())
	}
	return &Fabric{tcp: tf, h: h, stats: wordmem.NewTally(cfg)}, nil
}

// Name is "verbs".
func (f *Fabric) Name() string { return "verbs" }

// Profile names the device, port and masked-CAS method, for the result's
// profile field.
func (f *Fabric) Profile() string {
	return fmt.Sprintf("%s port %d, masked CAS %s", f.h.name, f.h.port, MaskedCASReadCAS)
}

func (f *Fabric) Config() transport.Config                      { return f.tcp.Config() }
func (f *Fabric) Regions(n transport.NodeID) []transport.Region { return f.tcp.Regions(n) }
func (f *Fabric) Region(n transport.NodeID, name string) (transport.Region, error) {
	return f.tcp.Region(n, name)
}

// AddRegion adds the region through the node's server. Clients connected
// before it learn of it only when they reconnect: add regions before Go.
func (f *Fabric) AddRegion(n transport.NodeID, name string, size uint64) (transport.Region, error) {
	return f.tcp.AddRegion(n, name, size)
}

// Handle registers h on node n's server, as on the tcp fabric.
func (f *Fabric) Handle(n transport.NodeID, method uint16, h transport.Handler) {
	f.tcp.Handle(n, method, h)
}

// Setup is the tcp fabric's: bulk loading goes over the control plane,
// uncounted, before any QP exists.
func (f *Fabric) Setup(n transport.NodeID) transport.Endpoint { return f.tcp.Setup(n) }

// Go adds a client on thread of compute node n; its QPs connect at Run.
func (f *Fabric) Go(n transport.NodeID, thread int, body func(transport.Endpoint)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cfg := f.tcp.Config()
	if int(n) >= cfg.NodeCount() || cfg.Role(n) != transport.RoleCompute || thread < 0 || thread >= cfg.Threads {
		f.goErr = errors.Join(f.goErr, fmt.Errorf("verbs: Go on node %d thread %d: clients run on compute nodes %v, threads 0-%d", n, thread, cfg.ComputeNodeIDs(), cfg.Threads-1))
		return
	}
	f.pending = append(f.pending, &client{n: n, thread: thread, body: body})
}

// Run connects every pending client's QPs, runs the clients as
// goroutines and waits for all of them; the first panic or connection
// failure is its error.
func (f *Fabric) Run() error {
	f.mu.Lock()
	if f.running {
		f.mu.Unlock()
		return errors.New("verbs: Run called while another Run is in progress")
	}
	clients, err := f.pending, f.goErr
	f.pending, f.goErr = nil, nil
	if err == nil && f.closed {
		err = errors.New("verbs: Run on a closed fabric")
	}
	if err != nil {
		f.mu.Unlock()
		return err
	}
	f.running = true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running = false
		f.mu.Unlock()
	}()

	eps := make([]*endpoint, len(clients))
	for i, c := range clients {
		ep, err := f.attach(c.n, c.thread)
		if err != nil {
			for _, e := range eps[:i] {
				e.detach()
			}
			return err
		}
		eps[i] = ep
	}
	var g errgroup.Group
	for i, c := range clients {
		g.Go(func() error { return run(c, eps[i]) })
	}
	first := g.Wait()
	for _, ep := range eps {
		ep.detach()
	}
	return first
}

func run(c *client, ep *endpoint) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("verbs: client on node %d thread %d panicked: %v\n%s", c.n, c.thread, r, debug.Stack())
		}
	}()
	c.body(ep)
	return nil
}

// Attach returns an endpoint on thread of compute node n for a goroutine
// the caller runs itself, as tcp.Fabric.Attach does; its counters join
// Stats when detach is called.
func (f *Fabric) Attach(n transport.NodeID, thread int) (transport.Endpoint, func(), error) {
	ep, err := f.attach(n, thread)
	if err != nil {
		return nil, nil, err
	}
	return ep, ep.detach, nil
}

// Stats sums the control plane's counters (RPCs, verbs to compute nodes)
// and the QPs' (verbs to memory nodes). Call it between runs only.
func (f *Fabric) Stats() transport.Stats {
	st := f.tcp.Stats()
	f.mu.Lock()
	defer f.mu.Unlock()
	t := wordmem.NewTally(f.tcp.Config())
	t.Merge(&wordmem.Tally{Verbs: st.Verbs, Nodes: st.Nodes})
	t.Merge(&f.stats)
	st.Verbs, st.Nodes = t.Verbs, t.Nodes
	return st
}

// ResetStats zeroes every counter and starts a new window.
func (f *Fabric) ResetStats() {
	f.tcp.ResetStats()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats = wordmem.NewTally(f.tcp.Config())
}

// Close destroys every QP and the device's resources, then closes the
// control plane. It must not be called while Run is in progress.
func (f *Fabric) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	eps := f.eps
	f.eps = nil
	f.mu.Unlock()
	var errs []error
	for _, ep := range eps {
		errs = append(errs, ep.close())
	}
	errs = append(errs, f.h.close(), f.tcp.Close())
	return errors.Join(errs...)
}
