package local

import "github.com/dmbench/dmbench/transport"

// Attach returns an endpoint on thread of compute node n for a goroutine
// the caller runs itself, outside Go and Run: the go-ycsb binary's client
// threads drive indexes this way. The endpoint's counters join Stats when
// the returned detach function is called, after its last verb.
func (f *Fabric) Attach(n transport.NodeID, thread int) (transport.Endpoint, func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkClient(n, thread); err != nil {
		return nil, nil, err
	}
	ep := f.newEndpoint(n, thread, stream(n, thread, f.clients), true)
	f.clients++
	detach := func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.stats.Add(ep.node, ep.stats)
		ep.stats = &transport.VerbStats{}
	}
	return ep, detach, nil
}
