package tcp

import (
	"time"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/internal/wordmem"
)

// Stats returns the counters of every client finished since the last
// ResetStats and of every RPC core. Call it between runs only: endpoints
// count without synchronisation while Run is in progress.
func (f *Fabric) Stats() transport.Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := wordmem.NewTally(f.cfg)
	t.Merge(&f.stats)
	for _, nd := range f.nodes {
		for _, core := range nd.coreEPs {
			t.Add(nd.id, core.stats)
		}
	}
	return transport.Stats{WindowNs: time.Since(f.window).Nanoseconds(), Verbs: t.Verbs, Nodes: t.Nodes}
}

// ResetStats zeroes every counter and starts a new window. Like Stats, it
// must not be called while Run is in progress.
func (f *Fabric) ResetStats() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats = wordmem.NewTally(f.cfg)
	for _, nd := range f.nodes {
		for _, core := range nd.coreEPs {
			*core.stats = transport.VerbStats{}
		}
	}
	f.window = time.Now()
}
