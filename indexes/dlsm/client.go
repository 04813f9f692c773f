package dlsm

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

type opKind byte

const (
	opSearch opKind = iota
	opInsert
	opUpdate
	opDelete
	opScan
)

// methodForward carries an operation to the compute node owning its key.
const methodForward uint16 = 0x444d

// Forward reply statuses.
const (
	fwdOK byte = iota
	fwdNotFound
	fwdError
)

// NewClient makes a client.
func (x *Index) NewClient(ep transport.Endpoint) indexes.Client {
	if !x.env.Serves(ep.Node()) {
		panic(fmt.Sprintf("dlsm: a client on compute node %d of an instance that serves compute nodes %v", ep.Node(), x.env.Compute))
	}
	return &client{x: x, ep: ep}
}

type client struct {
	x  *Index
	ep transport.Endpoint
}

// local returns the shard at i when this client's node owns it.
func (c *client) local(i int) *shard {
	if s := c.x.shards[i]; s != nil && s.node == c.ep.Node() {
		return s
	}
	return nil
}

func (c *client) Search(key []byte) ([]byte, bool, error) {
	i := c.x.owner(key)
	if s := c.local(i); s != nil {
		return s.lookup(c.ep, key, true)
	}
	rep, err := c.forward(i, opSearch, key, nil, 0)
	if err != nil {
		return nil, false, err
	}
	if rep[0] == fwdNotFound {
		return nil, false, nil
	}
	return rep[1:], true, nil
}

func (c *client) Insert(key, val []byte) error { return c.write(opInsert, key, val) }
func (c *client) Update(key, val []byte) error { return c.write(opUpdate, key, val) }
func (c *client) Delete(key []byte) error      { return c.write(opDelete, key, nil) }

func (c *client) write(op opKind, key, val []byte) error {
	i := c.x.owner(key)
	if s := c.local(i); s != nil {
		return s.write(c.ep, op, key, val)
	}
	rep, err := c.forward(i, op, key, val, 0)
	if err != nil {
		return err
	}
	if rep[0] == fwdNotFound {
		return indexes.ErrNotFound
	}
	return nil
}

// forward sends an operation to the owner of shard i, which runs it on
// one of its RPC cores as its own threads would (the artifact gives each
// compute node its own dLSM over its own key range; this is how another
// node's client reaches it).
func (c *client) forward(i int, op opKind, key, val []byte, n int) ([]byte, error) {
	c.ep.SetStep(stepForward)
	req := append([]byte{byte(op)}, binary.LittleEndian.AppendUint32(nil, uint32(n))...)
	req = append(append(req, key...), val...)
	rep, err := c.ep.Call(c.x.comps[i], methodForward, req)
	if err != nil {
		return nil, wrap(fmt.Sprintf("forward to compute node %d", c.x.comps[i]), err)
	}
	if len(rep) == 0 {
		return nil, errors.New("dlsm: empty forward reply")
	}
	if rep[0] == fwdError {
		return nil, errors.New(string(rep[1:]))
	}
	return rep, nil
}

// serveForward runs a forwarded operation on the owning compute node.
func (x *Index) serveForward(ep transport.Endpoint, req []byte) ([]byte, error) {
	ks := x.f.ks
	if len(req) < 5+ks {
		return nil, fmt.Errorf("forward request of %d bytes", len(req))
	}
	op, n := opKind(req[0]), int(binary.LittleEndian.Uint32(req[1:]))
	key, val := req[5:5+ks], req[5+ks:]
	i := x.owner(key)
	s := x.shards[i]
	if s == nil || s.node != ep.Node() {
		return nil, fmt.Errorf("forwarded key %x belongs to compute node %d, not %d", key, x.comps[i], ep.Node())
	}
	fail := func(err error) ([]byte, error) { return append([]byte{fwdError}, err.Error()...), nil }
	switch op {
	case opSearch:
		v, ok, err := s.lookup(ep, key, true)
		if err != nil {
			return fail(err)
		}
		if !ok {
			return []byte{fwdNotFound}, nil
		}
		return append([]byte{fwdOK}, v...), nil
	case opScan:
		recs, err := s.scan(ep, key, x.upper(i), n)
		if err != nil {
			return fail(err)
		}
		out := []byte{fwdOK}
		for _, r := range recs {
			out = append(append(out, r.key...), r.val...)
		}
		return out, nil
	default:
		err := s.write(ep, op, key, val)
		if errors.Is(err, indexes.ErrNotFound) {
			return []byte{fwdNotFound}, nil
		}
		if err != nil {
			return fail(err)
		}
		return []byte{fwdOK}, nil
	}
}

// upper is the first key past shard i, nil for the last shard.
func (x *Index) upper(i int) []byte {
	if i+1 < len(x.bounds) {
		return x.bounds[i+1]
	}
	return nil
}

// Scan merges every shard's levels and memtables from start: the owner
// of start first, then the following shards while entries are wanted.
func (c *client) Scan(start []byte, n int, fn func(key, val []byte) bool) error {
	if n <= 0 {
		return nil
	}
	ks, vs := c.x.f.ks, c.x.f.vs
	from := append([]byte(nil), start...)
	for i := c.x.owner(start); i < len(c.x.shards) && n > 0; i++ {
		if i > c.x.owner(start) {
			from = c.x.bounds[i]
		}
		var recs []record
		if s := c.local(i); s != nil {
			var err error
			if recs, err = s.scan(c.ep, from, c.x.upper(i), n); err != nil {
				return err
			}
		} else {
			rep, err := c.forward(i, opScan, from, nil, n)
			if err != nil {
				return err
			}
			body := rep[1:]
			if len(body)%(ks+vs) != 0 {
				return fmt.Errorf("dlsm: scan reply of %d bytes", len(body))
			}
			for len(body) > 0 {
				recs = append(recs, record{key: body[:ks], val: body[ks : ks+vs]})
				body = body[ks+vs:]
			}
		}
		for _, r := range recs {
			if !fn(r.key, r.val) {
				return nil
			}
		}
		n -= len(recs)
	}
	return nil
}
