package wordmem

import (
	"github.com/dmbench/dmbench/transport"
)

// Tally accumulates endpoints' counters and what they imply for each node.
//
// Per node, a verb is one message at the requester and one at the
// responder (a verb to the requester's own node counts both there); its
// payload is sent by the requester and received by the responder (and the
// reverse for what comes back). There is no header model: BytesTx and
// BytesRx are payload bytes. RPCs counts the requests that reached a
// handler of the node.
type Tally struct {
	Verbs transport.VerbStats
	Nodes []transport.NodeStats
}

// NewTally is an empty tally of cfg's nodes.
func NewTally(cfg transport.Config) Tally {
	n := cfg.NodeCount()
	t := Tally{Verbs: transport.VerbStats{ByNode: make([]transport.Counters, n)}}
	for i := range n {
		id := transport.NodeID(i)
		ns := transport.NodeStats{ID: id, Role: cfg.Role(id), Cores: cfg.Cores(id)}
		if ns.Role == transport.RoleCompute {
			ns.Threads = cfg.Threads
		}
		t.Nodes = append(t.Nodes, ns)
	}
	return t
}

// Add accounts the counters vs of an endpoint on node from.
func (t *Tally) Add(from transport.NodeID, vs *transport.VerbStats) {
	t.Verbs.Merge(vs)
	req := &t.Nodes[from]
	for to := range vs.ByNode {
		resp := &t.Nodes[to]
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

// Merge adds another tally of the same fabric into t.
func (t *Tally) Merge(o *Tally) {
	t.Verbs.Merge(&o.Verbs)
	for i := range t.Nodes {
		n, m := &t.Nodes[i], &o.Nodes[i]
		n.Msgs += m.Msgs
		n.RPCs += m.RPCs
		n.BytesTx += m.BytesTx
		n.BytesRx += m.BytesRx
	}
}
