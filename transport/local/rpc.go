package local

import (
	"fmt"
	"slices"

	"github.com/dmbench/dmbench/transport"
)

// Call runs the handler for method on node n in the caller's goroutine,
// on one of n's RPC cores. The handler sees a copy of req and the caller
// gets a copy of the reply, so neither side keeps a Go pointer into the
// other's buffers, as no real message would let them.
//
// An RPC the fabric rejects (no such node, no handler) counts nothing; one
// that reaches its handler counts len(req) bytes out and, when it succeeds,
// len(reply) bytes in.
func (e *endpoint) Call(n transport.NodeID, method uint16, req []byte) ([]byte, error) {
	nd, err := e.f.node(n)
	if err != nil {
		return nil, fmt.Errorf("local: rpc %#04x: %w", method, err)
	}
	h := nd.handlers[method]
	if h == nil {
		return nil, fmt.Errorf("local: rpc %#04x on node %d: no handler registered for this method", method, n)
	}
	reply, err := e.f.serve(nd, h, slices.Clone(req), !e.Counted())
	var in uint64
	if err == nil {
		in = uint64(len(reply))
	}
	e.CountVerb(n, transport.VerbRPC, uint64(len(req)), in)
	if err != nil {
		return nil, fmt.Errorf("local: rpc %#04x on node %d: %w", method, n, err)
	}
	return slices.Clone(reply), nil
}

// serve runs h on node nd. A Setup caller's request is served by a Setup
// endpoint of nd, outside the cores and the statistics; any other waits for
// a free core and runs on that core's endpoint.
func (f *Fabric) serve(nd *node, h transport.Handler, req []byte, setup bool) ([]byte, error) {
	if setup {
		return h(f.Setup(nd.id), req)
	}
	core := <-nd.cores
	defer func() { nd.cores <- core }()
	return h(core, req)
}
