package local

import "github.com/dmbench/dmbench/transport"

// Go adds a client on thread of compute node n; it starts at the next Run.
// A node that is not a compute node or a thread that does not exist makes
// that Run fail without running anything.
func (f *Fabric) Go(n transport.NodeID, thread int, body func(transport.Endpoint)) {
	f.runner.Go(n, thread, body)
}

// Run starts every client added since the last Run as a goroutine and waits
// for all of them. A panicking client ends with an error holding the panic
// value and its stack; Run returns the first such error once every other
// client has finished. Run may be called again with new clients.
func (f *Fabric) Run() error { return f.runner.Run() }

// Attach returns an endpoint on thread of compute node n for a goroutine
// the caller runs itself, outside Go and Run: the go-ycsb binary's client
// threads drive indexes this way. The endpoint's counters join Stats when
// the returned detach function is called, after its last verb.
func (f *Fabric) Attach(n transport.NodeID, thread int) (transport.Endpoint, func(), error) {
	return f.runner.Attach(n, thread)
}

// Stats returns the counters of every client finished since the last
// ResetStats and of every RPC core. Call it between runs only: endpoints
// count without synchronisation while Run is in progress.
func (f *Fabric) Stats() transport.Stats { return f.runner.Stats() }

// ResetStats zeroes every counter and starts a new window. Like Stats, it
// must not be called while Run is in progress.
func (f *Fabric) ResetStats() { f.runner.ResetStats() }
