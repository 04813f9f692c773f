package tcp

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dmbench/dmbench/transport"
)

// Call sends req to the handler for method on node n and waits for its
// reply. The handler runs on one of n's cores, in n's server: the
// request and reply cross as messages (a call to the endpoint's own node,
// when its server runs in this process, gets copies of both), so neither
// side keeps a Go pointer into the other's buffers.
//
// An RPC the fabric rejects (no such node, no handler) counts nothing; one
// that reaches its handler counts len(req) bytes out and, when it
// succeeds, len(reply) bytes in.
func (e *endpoint) Call(n transport.NodeID, method uint16, req []byte) ([]byte, error) {
	reply, err := e.call1(n, method, req)
	var re *RemoteError
	rejected := errors.Is(err, errNoHandler) || errors.As(err, &re) && re.Rejected
	if !rejected && (err == nil || !errors.Is(err, errUnreached)) {
		var in uint64
		if err == nil {
			in = uint64(len(reply))
		}
		e.CountVerb(n, transport.VerbRPC, uint64(len(req)), in)
	}
	if err != nil {
		return nil, fmt.Errorf("tcp: rpc %#04x on node %d: %w", method, n, err)
	}
	return reply, nil
}

// errUnreached marks a call that never reached node n's server.
var errUnreached = errors.New("not sent")

func (e *endpoint) call1(n transport.NodeID, method uint16, req []byte) ([]byte, error) {
	if g := e.local(n); g != nil {
		reply, err := e.self.call(g, method, slices.Clone(req))
		return slices.Clone(reply), err
	}
	if int(n) >= len(e.peers) {
		if e.peers == nil {
			return nil, fmt.Errorf("%w: a memory node started on its own reaches no other node", errUnreached)
		}
		return nil, fmt.Errorf("%w: node %d does not exist (nodes are 0-%d)", errUnreached, n, len(e.peers)-1)
	}
	if len(req) > MaxFrame-headerBytes-2 {
		return nil, fmt.Errorf("%w: request of %d bytes exceeds the %d-byte frame limit", errUnreached, len(req), MaxFrame)
	}
	cl := e.call(0)
	cl.ops = cl.ops[:0]
	if err := e.peers[n].conn(e.conn).roundTrip(cl, func(b []byte, id uint64) []byte { return appendCall(b, id, method, req) }); err != nil {
		return nil, err
	}
	return cl.payload, nil
}
