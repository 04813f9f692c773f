package dex

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// errWrongOwner means the partitions changed while a forwarded operation
// travelled: the caller routes it again.
var errWrongOwner = errors.New("dex: not the owner")

const (
	fwdOK byte = iota
	fwdWrongOwner
)

// forward sends an operation on a key another compute node owns to that
// node, which serves it from its cache (section 4: each compute node is
// responsible for all requests in its range). Workloads with
// partitionedkeys=true never need it.
func (c *client) forward(owner int, op opKind, key, val []byte) ([]byte, bool, error) {
	req := make([]byte, 5, 5+len(key)+len(val))
	req[0] = byte(op)
	req = append(append(req, key...), val...)
	raw, err := c.ep.Call(c.x.comps[owner], methodForward, req)
	if err != nil {
		return nil, false, fmt.Errorf("dex: forward to compute node %d: %w", c.x.comps[owner], err)
	}
	if raw[0] == fwdWrongOwner {
		return nil, false, errWrongOwner
	}
	if len(raw) > 2 && raw[1] == 2 {
		return nil, false, errors.New(string(raw[2:]))
	}
	// The value needs no copy: serveForwardReq builds every reply afresh,
	// and a fabric hands the caller that reply or a copy of its own.
	return raw[2:], raw[1] == 1, nil
}

// serveForward registers the forwarding handler on every compute node
// this instance serves.
func (x *Index) serveForward() {
	if len(x.comps) < 2 {
		return
	}
	for i, n := range x.comps {
		if x.cn[i] == nil {
			continue
		}
		x.env.Fabric.Handle(n, methodForward, x.serveForwardReq)
		x.env.Fabric.Handle(n, methodAdopt, x.serveAdopt)
	}
}

// handlerClient is the client of one RPC core of a compute node.
func (x *Index) handlerClient(ep transport.Endpoint) *client {
	cn := x.compute(ep.Node())
	if c, ok := cn.handlers.Load(ep); ok {
		return c.(*client)
	}
	c := x.newClient(ep)
	cn.handlers.Store(ep, c)
	return c
}

func (x *Index) serveForwardReq(ep transport.Endpoint, req []byte) ([]byte, error) {
	l := &x.l
	if len(req) < 5+l.ks {
		return nil, fmt.Errorf("forward request of %d bytes", len(req))
	}
	op, n := opKind(req[0]), int(binary.LittleEndian.Uint32(req[1:]))
	key := req[5 : 5+l.ks]
	val := req[5+l.ks:]
	c := x.handlerClient(ep)
	cn := c.cn
	for {
		parts := x.parts.Load()
		if parts.owner(key) != cn.idx {
			return []byte{fwdWrongOwner, 0}, nil
		}
		if cn.enter(ep, key, parts) {
			break
		}
	}
	defer cn.own.RUnlock()
	c.begin()
	if op == opScan {
		out, next, err := c.scanLocal(key, n)
		if err != nil {
			return nil, err
		}
		return encodeScan(out, next), nil
	}
	// The reply is status, found and the value found: a search copies
	// the value straight out of the leaf into it.
	out := make([]byte, 2, 2+l.vs)
	var found bool
	var err error
	switch op {
	case opSearch:
		var rv []byte
		var rf bool
		rv, rf, err = c.onLeaf(key, nil, opSearch, func(nd node) (bool, error) {
			i, ok := l.leafFind(nd, key)
			if ok {
				out = append(out[:2], l.leafVal(nd, i)...)
			}
			found = ok
			return false, nil
		})
		if rv != nil || rf {
			out, found = append(out[:2], rv...), rf
		}
	case opUpdate:
		err = c.updateLocal(key, val)
	case opInsert:
		err = c.insertLocal(key, val)
	case opDelete:
		err = c.deleteLocal(key)
	}
	if op != opSearch {
		found = err == nil
		if errors.Is(err, indexes.ErrNotFound) {
			err = nil
		}
	}
	if err != nil {
		return append([]byte{fwdOK, 2}, err.Error()...), nil
	}
	out[0] = fwdOK
	if found {
		out[1] = 1
	}
	return out, nil
}
