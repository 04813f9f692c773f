package tcp

import (
	"errors"
	"fmt"
	"runtime/debug"

	"golang.org/x/sync/errgroup"

	"github.com/dmbench/dmbench/transport"
)

// client is a body waiting for Run, with the endpoint it will run on.
type client struct {
	ep    *endpoint
	index int // order of the Go call among all clients of the fabric
	body  func(transport.Endpoint)
}

// Go adds a client on thread of compute node n; it starts at the next Run.
// A node that is not a compute node or a thread that does not exist makes
// that Run fail without running anything.
func (f *Fabric) Go(n transport.NodeID, thread int, body func(transport.Endpoint)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkClient(n, thread); err != nil {
		f.goErr = errors.Join(f.goErr, err)
		return
	}
	ep := f.newEndpoint(n, thread, stream(n, thread, f.clients), true, f.nodes[n].srv)
	f.pending = append(f.pending, &client{ep: ep, index: f.clients, body: body})
	f.clients++
}

func (f *Fabric) checkClient(n transport.NodeID, thread int) error {
	if int(n) >= len(f.nodes) || f.cfg.Role(n) != transport.RoleCompute {
		return fmt.Errorf("tcp: Go on node %d: clients run on compute nodes %v", n, f.cfg.ComputeNodeIDs())
	}
	if !f.hosts(n) {
		return fmt.Errorf("tcp: Go on node %d: the compute node runs in another process; this one runs %v", n, f.opt.Compute)
	}
	if thread < 0 || thread >= f.cfg.Threads {
		return fmt.Errorf("tcp: Go on node %d thread %d: threads are 0-%d", n, thread, f.cfg.Threads-1)
	}
	return nil
}

// Run starts every client added since the last Run as a goroutine and waits
// for all of them. A panicking client ends with an error holding the panic
// value and its stack; Run returns the first such error once every other
// client has finished. Run may be called again with new clients.
func (f *Fabric) Run() error {
	f.mu.Lock()
	if f.running {
		f.mu.Unlock()
		return errors.New("tcp: Run called while another Run is in progress")
	}
	clients, err := f.pending, errors.Join(f.goErr, f.unservedErr())
	f.pending, f.goErr = nil, nil
	if err != nil {
		f.mu.Unlock()
		return err
	}
	f.running = true
	f.mu.Unlock()

	var g errgroup.Group
	for _, c := range clients {
		g.Go(c.run)
	}
	first := g.Wait()

	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range clients {
		f.stats.Add(c.ep.node, c.ep.stats)
	}
	f.running = false
	return first
}

// run calls the body, turning a panic into an error.
func (c *client) run() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("tcp: client %d on node %d thread %d panicked: %v\n%s", c.index, c.ep.node, c.ep.thread, r, debug.Stack())
		}
	}()
	c.body(c.ep)
	return nil
}
