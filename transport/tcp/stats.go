package tcp

import (
	"time"

	"github.com/dmbench/dmbench/transport"
)

// tally accumulates endpoints' counters and what they imply for each node.
//
// Per node, a verb is one message at the requester and one at the
// responder (a verb to the requester's own node counts both there); its
// payload is sent by the requester and received by the responder (and the
// reverse for what comes back). There is no header model: BytesTx and
// BytesRx are payload bytes. RPCs counts the requests that reached a
// handler of the node.
type tally struct {
	verbs transport.VerbStats
	nodes []transport.NodeStats
}

func (f *Fabric) newTally() tally {
	t := tally{verbs: transport.VerbStats{ByNode: make([]transport.Counters, len(f.nodes))}}
	for _, nd := range f.nodes {
		ns := transport.NodeStats{ID: nd.id, Role: f.cfg.Role(nd.id), Cores: f.cfg.Cores(nd.id)}
		if ns.Role == transport.RoleCompute {
			ns.Threads = f.cfg.Threads
		}
		t.nodes = append(t.nodes, ns)
	}
	return t
}

// add accounts the counters vs of an endpoint on node from.
func (t *tally) add(from transport.NodeID, vs *transport.VerbStats) {
	t.verbs.Merge(vs)
	req := &t.nodes[from]
	for to := range vs.ByNode {
		resp := &t.nodes[to]
		for v, c := range vs.ByNode[to] {
			req.Msgs += c.Count
			resp.Msgs += c.Count
			req.BytesTx += c.BytesOut
			req.BytesRx += c.BytesIn
			resp.BytesRx += c.BytesOut
			resp.BytesTx += c.BytesIn
			if transport.VerbKind(v) == transport.VerbRPC {
				resp.RPCs += c.Count
			}
		}
	}
}

// merge adds another tally of the same fabric into t.
func (t *tally) merge(o *tally) {
	t.verbs.Merge(&o.verbs)
	for i := range t.nodes {
		n, m := &t.nodes[i], &o.nodes[i]
		n.Msgs += m.Msgs
		n.RPCs += m.RPCs
		n.BytesTx += m.BytesTx
		n.BytesRx += m.BytesRx
	}
}

// Stats returns the counters of every client finished since the last
// ResetStats and of every RPC core. Call it between runs only: endpoints
// count without synchronisation while Run is in progress.
func (f *Fabric) Stats() transport.Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.newTally()
	t.merge(&f.stats)
	for _, nd := range f.nodes {
		for _, core := range nd.coreEPs {
			t.add(nd.id, core.stats)
		}
	}
	return transport.Stats{WindowNs: time.Since(f.window).Nanoseconds(), Verbs: t.verbs, Nodes: t.nodes}
}

// ResetStats zeroes every counter and starts a new window. Like Stats, it
// must not be called while Run is in progress.
func (f *Fabric) ResetStats() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats = f.newTally()
	for _, nd := range f.nodes {
		for _, core := range nd.coreEPs {
			*core.stats = transport.VerbStats{}
		}
	}
	f.window = time.Now()
}
