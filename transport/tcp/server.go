package tcp

import (
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/internal/realtime"
)

// ServerConfig is what a node's server is started with.
type ServerConfig struct {
	// Key is the cluster key: a client proves it holds the same key
	// before its first request is served.
	Key []byte
	// Capacity bounds the bytes of all regions the server holds; 0 means
	// no bound.
	Capacity uint64
	// Cores is the number of RPC handlers that run at once.
	Cores int
	// NewCore makes the endpoint a handler runs on for each core; nil
	// gives endpoints that reach this node's memory only (a memory node
	// started on its own knows no other node).
	NewCore func(s *Server, core int) transport.Endpoint
	// Logf, when set, reports connections refused or cut.
	Logf func(format string, args ...any)
	// Install, when set, makes the memory-node handlers of an index from
	// an install request's arguments (indexes.Offloads, which dmbench
	// memnode passes): a compute node that builds DEX or dLSM has the
	// memory node serve them. Nil refuses install requests.
	Install func(index string, args []byte) (map[uint16]transport.Handler, error)
	// OnMemory, when set, is called with the node's memory each time it is
	// laid out anew or gains a region, before anyone learns of it: a
	// device that serves the memory itself (the verbs fabric's RDMA NIC)
	// registers it there. Its error fails the layout or the region.
	OnMemory func(Memory) error
}

// Memory is a node's memory as a server holds it at one moment: its
// layout and the bytes behind each region, which stay where they are
// until the server replaces the layout or the node's memory is released.
type Memory interface {
	Layout() transport.Layout
	// RegionBytes is the memory of the i-th region of Layout.
	RegionBytes(i int) []byte
}

// Server serves one node's regions and RPC handlers over TCP: it executes
// the one-sided verbs clients send it, checking each against the node's
// layout, and runs RPC handlers on its cores. Build it with NewServer,
// give it a layout with Configure (or let the first client's hello do it)
// and serve a listener with Serve.
type Server struct {
	cfg   ServerConfig
	cores chan transport.Endpoint

	// g is the node's memory, nil before Configure; replaced under mu.
	g atomic.Pointer[nodeMem]

	mu       sync.Mutex // guards the fields below
	handlers map[uint16]transport.Handler
	ln       net.Listener
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup // connections being served
	closed   bool
}

// NewServer builds a server with no layout yet.
func NewServer(cfg ServerConfig) (*Server, error) {
	if len(cfg.Key) == 0 {
		return nil, errors.New("tcp: server: the cluster key is empty")
	}
	if cfg.Cores < 1 {
		return nil, fmt.Errorf("tcp: server: cores = %d: need at least 1", cfg.Cores)
	}
	s := &Server{cfg: cfg, cores: make(chan transport.Endpoint, cfg.Cores),
		handlers: make(map[uint16]transport.Handler), conns: make(map[net.Conn]struct{})}
	for c := range cfg.Cores {
		var ep transport.Endpoint
		if cfg.NewCore != nil {
			ep = cfg.NewCore(s, c)
		} else {
			ep = &endpoint{self: s, floating: true,
				Endpoint: realtime.NewEndpoint(0, c, 0, realtime.Stream(0, realtime.HandlerThread, c), time.Time{}, false)}
		}
		s.cores <- ep
	}
	return s, nil
}

// Configure gives the server the layout of node: a main region of main
// bytes, a device region of device bytes (none when 0), and, for a memory
// node, the chunk server on its main region. A server that holds the same
// layout keeps its memory unless fresh; fresh, or a different layout
// asked for when the server holds none in use, replaces it with zeroed
// memory.
func (s *Server) Configure(node transport.NodeID, mode transport.Mode, main, device uint64, memoryNode, fresh bool) error {
	h := hello{node: node, mode: mode, main: main, device: device, fresh: fresh, configure: true}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.configureLocked(&h, memoryNode)
	return err
}

func (s *Server) configureLocked(h *hello, memoryNode bool) (*nodeMem, error) {
	if s.closed {
		return nil, errors.New("tcp: server is closed")
	}
	old := s.g.Load()
	if old != nil && !h.fresh {
		if old.sameShape(h) {
			return old, nil
		}
		return nil, fmt.Errorf("tcp: node %d asked for %s; the server holds %s: restart it or ask for fresh memory",
			h.node, shape(h.node, h.mode, h.main, h.device), describe(old))
	}
	g, err := newNodeMem(h.node, h.mode, h.main, h.device, s.cfg.Capacity, memoryNode, s.cfg.OnMemory)
	if err != nil {
		return nil, err
	}
	s.g.Store(g)
	if old != nil {
		if err := old.retire(); err != nil {
			return g, err
		}
	}
	return g, nil
}

func shape(n transport.NodeID, mode transport.Mode, main, device uint64) string {
	return fmt.Sprintf("node %d (%s mode, main %d bytes, device %d bytes)", n, mode, main, device)
}

func describe(g *nodeMem) string {
	var main, device uint64
	for _, r := range g.view.Load().layout.Regions {
		switch r.Name {
		case "main":
			main = r.Size
		case "device":
			device = r.Size
		}
	}
	return shape(g.node, g.mode, main, device)
}

// mem is the node's current memory, nil before Configure.
func (s *Server) mem() *nodeMem { return s.g.Load() }

// install serves the handlers cfg.Install makes for index from args and
// returns their methods in increasing order.
func (s *Server) install(index string, args []byte) ([]uint16, error) {
	if s.cfg.Install == nil {
		return nil, fmt.Errorf("this server installs no handlers (index %s asked)", index)
	}
	hs, err := s.cfg.Install(index, args)
	if err != nil {
		return nil, err
	}
	methods := slices.Sorted(maps.Keys(hs))
	for _, m := range methods {
		if m == transport.MethodAllocChunk {
			return nil, fmt.Errorf("index %s: a handler for the chunk allocator's method %#04x", index, m)
		}
	}
	for _, m := range methods {
		s.Handle(m, hs[m])
	}
	return methods, nil
}

// Handle registers h for method.
func (s *Server) Handle(method uint16, h transport.Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[method] = h
}

func (s *Server) handler(g *nodeMem, method uint16) transport.Handler {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.handlers[method]; h != nil {
		return h
	}
	if method == transport.MethodAllocChunk {
		return g.chunks
	}
	return nil
}

// call runs the handler of method on one of the server's cores.
func (s *Server) call(g *nodeMem, method uint16, req []byte) (reply []byte, err error) {
	h := s.handler(g, method)
	if h == nil {
		return nil, fmt.Errorf("%w for method %#04x on node %d", errNoHandler, method, g.node)
	}
	core := <-s.cores
	defer func() { s.cores <- core }()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler for method %#04x on node %d panicked: %v\n%s", method, g.node, r, debug.Stack())
		}
	}()
	return h(core, req)
}

// Listen serves addr ("127.0.0.1:0" picks a free port) until Close, and
// returns the address it listens on.
func (s *Server) Listen(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("tcp: listen on %s: %w", addr, err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return "", errors.New("tcp: server is closed")
	}
	s.ln = ln
	s.wg.Add(1)
	s.mu.Unlock()
	go s.accept(ln)
	return ln.Addr().String(), nil
}

func (s *Server) accept(ln net.Listener) {
	defer s.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			err := s.serve(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			// A peer that hangs up between frames is done, not failed.
			if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && s.cfg.Logf != nil {
				s.cfg.Logf("tcp: connection from %s: %v", c.RemoteAddr(), err)
			}
		}()
	}
}

// Close stops listening, cuts every connection, waits for their
// goroutines and releases the node's memory.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.ln != nil {
		s.ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.mu.Lock()
	g := s.g.Swap(nil)
	s.mu.Unlock()
	if g != nil {
		return g.retire()
	}
	return nil
}

// mac is the proof of the key for nonce.
func mac(key, nonce []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("dmbench tcp fabric v1\x00"))
	m.Write(nonce)
	return m.Sum(nil)
}

// serve runs one connection: the key challenge, the hello, then requests
// until the peer goes away. A request that is wrong gets an error frame
// naming what is wrong; only a frame that cannot be delimited (too long,
// cut short) or a failed hello ends the connection.
func (s *Server) serve(c net.Conn) error {
	defer c.Close()
	w := newWriter(c)
	defer w.finish()
	nonce := make([]byte, nonceBytes)
	if _, err := crand.Read(nonce); err != nil {
		return err
	}
	w.send(func(b []byte) []byte {
		b, st := beginFrame(b, frameChallenge, 0)
		return endFrame(append(b, nonce...), st)
	})
	fr := newFrameReader(c)
	g, err := s.greet(fr, w, nonce)
	if err != nil {
		return err
	}
	defer g.drop()
	sc := &serverConn{s: s, g: g, w: w}
	defer sc.calls.Wait()
	for {
		typ, id, p, err := fr.next()
		if err != nil {
			if errors.Is(err, errFrame) {
				w.send(func(b []byte) []byte { return appendError(b, id, err) })
			}
			return err
		}
		sc.handle(typ, id, p)
	}
}

// greet checks the hello: protocol version and key, then the layout.
func (s *Server) greet(fr *frameReader, w *writer, nonce []byte) (*nodeMem, error) {
	fail := func(id uint64, err error) (*nodeMem, error) {
		w.send(func(b []byte) []byte { return appendError(b, id, err) })
		return nil, err
	}
	typ, id, p, err := fr.next()
	if err != nil {
		return fail(id, fmt.Errorf("reading hello: %w", err))
	}
	if typ != frameHello {
		return fail(id, fmt.Errorf("first request has frame type %d, want a hello (%d)", typ, frameHello))
	}
	h, err := decodeHello(p)
	if err != nil {
		return fail(id, err)
	}
	if h.version != protocolVersion {
		return fail(id, fmt.Errorf("hello of protocol version %d, this server speaks %d", h.version, protocolVersion))
	}
	if !hmac.Equal(h.mac[:], mac(s.cfg.Key, nonce)) {
		return fail(id, errors.New("the cluster key does not match this server's"))
	}
	s.mu.Lock()
	var g *nodeMem
	if h.configure {
		g, err = s.configureLocked(&h, true)
	} else if g = s.g.Load(); g == nil {
		err = errors.New("the server holds no layout yet")
	} else if g.node != h.node {
		err = fmt.Errorf("the server serves node %d, the client asked for node %d", g.node, h.node)
	}
	if err == nil && !g.acquire() {
		err = errors.New("the server's memory was replaced meanwhile")
	}
	s.mu.Unlock()
	if err != nil {
		return fail(id, err)
	}
	v := g.view.Load()
	wel := welcome{node: g.node, cores: uint16(s.cfg.Cores), mode: g.mode, regions: v.layout.Regions}
	w.send(func(b []byte) []byte { return appendWelcome(b, id, &wel) })
	return g, nil
}

// serverConn is the state of one authenticated connection.
type serverConn struct {
	s     *Server
	g     *nodeMem
	w     *writer
	ops   []batchOp // decoded batch, reused
	out   []byte    // batch reply payload, reused
	calls sync.WaitGroup
}

// handle answers one request. Batches and region changes run in the
// reading goroutine, in order; calls run on a core in their own goroutine
// and reply when their handlers return.
func (sc *serverConn) handle(typ byte, id uint64, p []byte) {
	reply := func(err error, encode func([]byte) []byte) {
		if err != nil {
			encode = func(b []byte) []byte { return appendError(b, id, err) }
		}
		sc.w.send(encode)
	}
	switch typ {
	case frameBatch:
		ops, err := decodeBatch(p, sc.ops)
		if err == nil {
			sc.ops = ops
			sc.out, err = sc.g.serveBatch(ops, sc.out[:0])
		}
		reply(err, func(b []byte) []byte {
			b, st := beginFrame(b, frameBatchReply, id)
			return endFrame(append(b, sc.out...), st)
		})
	case frameCall:
		method, req, err := decodeCall(p)
		if err != nil {
			reply(err, nil)
			return
		}
		req = slices.Clone(req) // p is reused by the next frame
		sc.calls.Add(1)
		go func() {
			defer sc.calls.Done()
			out, err := sc.s.call(sc.g, method, req)
			reply(err, func(b []byte) []byte {
				if len(out) > MaxFrame-headerBytes-2 {
					return appendError(b, id, fmt.Errorf("reply of %d bytes to method %#04x exceeds the %d-byte frame limit", len(out), method, MaxFrame))
				}
				b, st := beginFrame(b, frameCallReply, id)
				return endFrame(append(b, out...), st)
			})
		}()
	case frameAddRegion:
		name, size, err := decodeAddRegion(p)
		var rg transport.Region
		if err == nil {
			rg, err = sc.g.addRegion(name, size, false)
		}
		reply(err, func(b []byte) []byte { return appendRegionReply(b, id, rg) })
	case frameInstall:
		index, args, err := decodeInstall(p)
		var methods []uint16
		if err == nil {
			methods, err = sc.s.install(index, args)
		}
		reply(err, func(b []byte) []byte {
			b, st := beginFrame(b, frameCallReply, id)
			for _, m := range methods {
				b = binary.LittleEndian.AppendUint16(b, m)
			}
			return endFrame(b, st)
		})
	case frameLayout:
		var err error
		if len(p) != 0 {
			err = fmt.Errorf("%w: layout request with %d bytes of payload, want none", errFrame, len(p))
		}
		wel := welcome{node: sc.g.node, cores: uint16(sc.s.cfg.Cores), mode: sc.g.mode, regions: sc.g.view.Load().layout.Regions}
		reply(err, func(b []byte) []byte { return appendWelcome(b, id, &wel) })
	case frameHello:
		reply(errors.New("a second hello on an open connection"), nil)
	default:
		reply(fmt.Errorf("%w: unknown frame type %d", errFrame, typ), nil)
	}
}
