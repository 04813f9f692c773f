package tcp

import (
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dmbench/dmbench/transport"
)

// dialTimeout bounds connecting to a node and its hello.
const dialTimeout = 10 * time.Second

// peer is this process's connections to one node's server and what it
// knows of the node: its layout and cores.
type peer struct {
	node  transport.NodeID
	addr  string
	conns []*clientConn
	cores int
	// layout is replaced whole when a region is added, so verbs check
	// addresses without a lock.
	layout atomic.Pointer[transport.Layout]
}

// conn picks the connection of the client with index i.
func (p *peer) conn(i int) *clientConn { return p.conns[i%len(p.conns)] }

func (p *peer) close() {
	for _, c := range p.conns {
		c.close()
	}
}

// call is one request in flight and, once done is signalled, its outcome.
type call struct {
	ops     []transport.Op // a batch: READ data and old values land here
	payload []byte         // a call's reply or an added region
	err     error
	done    chan struct{}
}

func newCall() *call { return &call{done: make(chan struct{}, 1)} }

// clientConn is one connection to a node's server: requests are framed
// with ids and pipelined; a reader goroutine matches replies to them.
type clientConn struct {
	p *peer
	c net.Conn
	w *writer

	mu      sync.Mutex // guards the fields below
	pending map[uint64]*call
	next    uint64
	err     error // the connection failed: every request fails with it
}

// dial connects to addr, proves the key and sends h; it returns the
// connection, serving, and the server's welcome.
func dial(p *peer, key []byte, h hello) (*clientConn, welcome, error) {
	fail := func(err error) (*clientConn, welcome, error) {
		return nil, welcome{}, fmt.Errorf("tcp: node %d at %s: %w", p.node, p.addr, err)
	}
	nc, err := net.DialTimeout("tcp", p.addr, dialTimeout)
	if err != nil {
		return fail(err)
	}
	nc.SetDeadline(time.Now().Add(dialTimeout))
	fr := newFrameReader(nc)
	typ, _, nonce, err := fr.next()
	if err == nil && (typ != frameChallenge || len(nonce) != nonceBytes) {
		err = fmt.Errorf("%w: expected a key challenge, got frame type %d of %d bytes", errFrame, typ, len(nonce))
	}
	if err != nil {
		nc.Close()
		return fail(fmt.Errorf("reading the key challenge: %w", err))
	}
	copy(h.mac[:], mac(key, nonce))
	h.version = protocolVersion
	if _, err := nc.Write(appendHello(nil, 0, &h)); err != nil {
		nc.Close()
		return fail(fmt.Errorf("sending hello: %w", err))
	}
	typ, _, payload, err := fr.next()
	var wel welcome
	switch {
	case err != nil:
	case typ == frameWelcome:
		wel, err = decodeWelcome(payload)
	case typ == frameError:
		var remote error
		if remote, err = decodeError(payload); err == nil {
			err = fmt.Errorf("refused the connection: %w", remote)
		}
	default:
		err = fmt.Errorf("%w: expected a welcome, got frame type %d", errFrame, typ)
	}
	if err != nil {
		nc.Close()
		return fail(err)
	}
	nc.SetDeadline(time.Time{})
	c := &clientConn{p: p, c: nc, w: newWriter(nc), pending: make(map[uint64]*call)}
	go c.read(fr)
	return c, wel, nil
}

// start sends the request encode builds, with a fresh id, for cl.
func (c *clientConn) start(cl *call, encode func(b []byte, id uint64) []byte) error {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	id := c.next
	c.next++
	c.pending[id] = cl
	c.mu.Unlock()
	if err := c.w.send(func(b []byte) []byte { return encode(b, id) }); err != nil {
		c.mu.Lock()
		_, mine := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if !mine {
			// The reader failed the request meanwhile and signalled it:
			// take the signal, or the call's next use would see it.
			<-cl.done
		}
		return c.lost(err)
	}
	return nil
}

// wait blocks until cl's reply has arrived or its connection failed.
func (cl *call) wait() error {
	<-cl.done
	return cl.err
}

// roundTrip sends one request and waits for its reply.
func (c *clientConn) roundTrip(cl *call, encode func(b []byte, id uint64) []byte) error {
	if err := c.start(cl, encode); err != nil {
		return err
	}
	return cl.wait()
}

// lost is the error of a request on a failed connection.
func (c *clientConn) lost(err error) error {
	return fmt.Errorf("tcp: node %d at %s: connection lost: %w", c.p.node, c.p.addr, err)
}

// read delivers replies until the connection fails, then fails every
// request still pending.
func (c *clientConn) read(fr *frameReader) {
	var err error
	for {
		var (
			typ byte
			id  uint64
			p   []byte
		)
		typ, id, p, err = fr.next()
		if err != nil {
			break
		}
		c.mu.Lock()
		cl := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if cl == nil {
			err = fmt.Errorf("%w: reply of type %d to request %d, which is not pending", errFrame, typ, id)
			break
		}
		switch typ {
		case frameBatchReply:
			cl.err = decodeBatchReply(p, cl.ops)
		case frameCallReply, frameRegion, frameWelcome:
			cl.payload = slices.Clone(p)
			cl.err = nil
		case frameError:
			remote, derr := decodeError(p)
			if cl.err = remote; derr != nil {
				cl.err = derr
			}
		default:
			cl.err = fmt.Errorf("%w: unexpected reply of type %d", errFrame, typ)
		}
		cl.done <- struct{}{}
	}
	c.mu.Lock()
	c.err = c.lost(err)
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	c.c.Close()
	for _, cl := range pending {
		cl.err = c.err
		cl.done <- struct{}{}
	}
}

func (c *clientConn) close() {
	c.c.Close()
	c.w.finish()
}
