package tcp

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/transport"
)

// A frame is a 4-byte little-endian length of what follows, then a 1-byte
// type, an 8-byte request id and the type's payload. Replies carry the id
// of their request, so many requests are in flight on one connection and
// replies may come back in any order (RPCs finish when their handlers do).
const (
	lenBytes    = 4
	headerBytes = 1 + 8
	// MaxFrame bounds a frame's body: a peer announcing more is cut off
	// before anything is allocated, and a batch whose request or reply
	// would exceed it is refused.
	MaxFrame = 64 << 20
	// maxName bounds region names and error texts inside frames.
	maxName = 1 << 16
)

// Frame types. Requests go from a client to a node's server; the server
// answers each with the reply type or frameError.
const (
	frameChallenge  byte = iota + 1 // server → client at accept: nonce
	frameHello                      // client → server: key proof, node, layout wanted
	frameWelcome                    // server → client: node, cores, mode, regions
	frameBatch                      // client → server: ops of one doorbell
	frameBatchReply                 // server → client: READ data and old values, in op order
	frameCall                       // client → server: method, request
	frameCallReply                  // server → client: reply
	frameAddRegion                  // client → server: size, name
	frameRegion                     // server → client: the region added
	frameError                      // server → client: what was wrong, naming it
	frameLayout                     // client → server: no payload; answered by a welcome
	frameInstall                    // client → server: index name, arguments; answered by a call reply of the methods
)

// protocolVersion changes with any change to the frame layout.
const protocolVersion = 2

// nonceBytes and macBytes size the key challenge and its answer
// (HMAC-SHA256 of the nonce under the cluster key).
const (
	nonceBytes = 16
	macBytes   = 32
)

// errFrame wraps every decoding failure.
var errFrame = errors.New("malformed frame")

// hello is a client's first request.
type hello struct {
	version uint16
	node    transport.NodeID
	// configure asks the server to hold the layout below for node (a
	// memory node started on its own); without it the server answers
	// with the layout it has.
	configure bool
	// fresh drops memory a server already holds for a new, zeroed layout.
	fresh        bool
	mode         transport.Mode
	main, device uint64
	mac          [macBytes]byte
}

// welcome is the server's answer to a good hello.
type welcome struct {
	node    transport.NodeID
	cores   uint16
	mode    transport.Mode
	regions []transport.Region
}

// batchOp is one op of a decoded batch: buf is a READ's length (as a nil
// slice of that length is not representable, n holds it) or a WRITE's
// data, aliasing the frame.
type batchOp struct {
	transport.Op
	n uint32 // READ: bytes to read
}

// Per-op encoded sizes after kind and address.
func opOperandBytes(k transport.VerbKind) int {
	switch k {
	case transport.VerbRead, transport.VerbWrite:
		return 4
	case transport.VerbCAS:
		return 16
	case transport.VerbMaskedCAS:
		return 32
	case transport.VerbFAA:
		return 8
	}
	return -1
}

// reader decodes a frame body, recording the first shortfall.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("%w: %d bytes wanted, %d left", errFrame, n, len(r.b))
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) u8() byte {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if p := r.take(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if p := r.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if p := r.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// bool reads a flag byte: 0 or 1, anything else is malformed, so that
// every frame that decodes has exactly one encoding.
func (r *reader) bool() bool {
	b := r.u8()
	if b > 1 && r.err == nil {
		r.err = fmt.Errorf("%w: flag byte %d, want 0 or 1", errFrame, b)
	}
	return b == 1
}

func (r *reader) str() string {
	n := r.u32()
	if n > maxName {
		if r.err == nil {
			r.err = fmt.Errorf("%w: string of %d bytes, at most %d", errFrame, n, maxName)
		}
		return ""
	}
	return string(r.take(int(n)))
}

// done reports the first error, or trailing bytes as one.
func (r *reader) done() error {
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%w: %d bytes after the payload", errFrame, len(r.b))
	}
	return r.err
}

func appendStr(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// beginFrame appends a frame header with a placeholder length; endFrame
// fills the length in once the payload is appended.
func beginFrame(b []byte, typ byte, id uint64) ([]byte, int) {
	start := len(b)
	b = append(b, 0, 0, 0, 0, typ)
	return binary.LittleEndian.AppendUint64(b, id), start
}

func endFrame(b []byte, start int) []byte {
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-lenBytes))
	return b
}

// splitFrame reads the type and id of a frame body.
func splitFrame(body []byte) (typ byte, id uint64, payload []byte, err error) {
	if len(body) < headerBytes {
		return 0, 0, nil, fmt.Errorf("%w: body of %d bytes is shorter than the %d-byte header", errFrame, len(body), headerBytes)
	}
	return body[0], binary.LittleEndian.Uint64(body[1:]), body[headerBytes:], nil
}

func appendHello(b []byte, id uint64, h *hello) []byte {
	b, s := beginFrame(b, frameHello, id)
	b = binary.LittleEndian.AppendUint16(b, h.version)
	b = binary.LittleEndian.AppendUint16(b, uint16(h.node))
	b = appendBool(b, h.configure)
	b = appendBool(b, h.fresh)
	b = append(b, byte(h.mode))
	b = binary.LittleEndian.AppendUint64(b, h.main)
	b = binary.LittleEndian.AppendUint64(b, h.device)
	b = append(b, h.mac[:]...)
	return endFrame(b, s)
}

func decodeHello(p []byte) (hello, error) {
	r := reader{b: p}
	h := hello{version: r.u16(), node: transport.NodeID(r.u16())}
	h.configure, h.fresh = r.bool(), r.bool()
	h.mode = transport.Mode(r.u8())
	h.main, h.device = r.u64(), r.u64()
	copy(h.mac[:], r.take(macBytes))
	if err := r.done(); err != nil {
		return hello{}, fmt.Errorf("hello: %w", err)
	}
	if h.mode > transport.ModeStrict {
		return hello{}, fmt.Errorf("hello: %w: memory mode %d is not paper (0) or strict (1)", errFrame, h.mode)
	}
	return h, nil
}

func appendRegion(b []byte, rg transport.Region) []byte {
	b = appendStr(b, rg.Name)
	b = binary.LittleEndian.AppendUint64(b, rg.Base.Offset())
	b = binary.LittleEndian.AppendUint64(b, rg.Size)
	return appendBool(b, rg.Device)
}

func (r *reader) region(n transport.NodeID) transport.Region {
	rg := transport.Region{Node: n, Name: r.str()}
	rg.Base = transport.Addr(n, r.u64())
	rg.Size = r.u64()
	rg.Device = r.bool()
	return rg
}

func appendWelcome(b []byte, id uint64, w *welcome) []byte {
	b, s := beginFrame(b, frameWelcome, id)
	b = binary.LittleEndian.AppendUint16(b, uint16(w.node))
	b = binary.LittleEndian.AppendUint16(b, w.cores)
	b = append(b, byte(w.mode))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(w.regions)))
	for _, rg := range w.regions {
		b = appendRegion(b, rg)
	}
	return endFrame(b, s)
}

func decodeWelcome(p []byte) (welcome, error) {
	r := reader{b: p}
	w := welcome{node: transport.NodeID(r.u16()), cores: r.u16(), mode: transport.Mode(r.u8())}
	n := r.u32()
	// Each region takes at least 21 bytes: a bound before allocating.
	if int64(n)*21 > int64(len(r.b)) {
		return welcome{}, fmt.Errorf("welcome: %w: %d regions in %d bytes", errFrame, n, len(r.b))
	}
	for range n {
		w.regions = append(w.regions, r.region(w.node))
	}
	if err := r.done(); err != nil {
		return welcome{}, fmt.Errorf("welcome: %w", err)
	}
	return w, nil
}

// appendBatch encodes ops as one frame: kind, address and operands; a
// READ carries its length, a WRITE its length and data.
func appendBatch(b []byte, id uint64, ops []transport.Op) []byte {
	b, s := beginFrame(b, frameBatch, id)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ops)))
	for i := range ops {
		o := &ops[i]
		b = append(b, byte(o.Kind))
		b = binary.LittleEndian.AppendUint64(b, uint64(o.Addr))
		switch o.Kind {
		case transport.VerbRead:
			b = binary.LittleEndian.AppendUint32(b, uint32(len(o.Buf)))
		case transport.VerbWrite:
			b = binary.LittleEndian.AppendUint32(b, uint32(len(o.Buf)))
			b = append(b, o.Buf...)
		case transport.VerbCAS:
			b = binary.LittleEndian.AppendUint64(b, o.Expect)
			b = binary.LittleEndian.AppendUint64(b, o.Swap)
		case transport.VerbMaskedCAS:
			b = binary.LittleEndian.AppendUint64(b, o.Expect)
			b = binary.LittleEndian.AppendUint64(b, o.Swap)
			b = binary.LittleEndian.AppendUint64(b, o.CmpMask)
			b = binary.LittleEndian.AppendUint64(b, o.SwapMask)
		case transport.VerbFAA:
			b = binary.LittleEndian.AppendUint64(b, o.Add)
		}
	}
	return endFrame(b, s)
}

// batchRequestBytes is the encoded size of ops in a batch frame.
func batchRequestBytes(ops []transport.Op) int {
	n := lenBytes + headerBytes + 4
	for i := range ops {
		n += 1 + 8 + opOperandBytes(ops[i].Kind)
		if ops[i].Kind == transport.VerbWrite {
			n += len(ops[i].Buf)
		}
	}
	return n
}

// batchReplyBytes is the payload of the reply to ops: READ data and one
// old value per atomic.
func batchReplyBytes(ops []batchOp) int {
	n := 0
	for i := range ops {
		switch {
		case ops[i].Kind == transport.VerbRead:
			n += int(ops[i].n)
		case ops[i].Kind.Atomic():
			n += 8
		}
	}
	return n
}

// decodeBatch decodes a batch's ops into dst (reused). WRITE data alias p.
// It checks the encoding only; addresses are the server's to check.
func decodeBatch(p []byte, dst []batchOp) ([]batchOp, error) {
	r := reader{b: p}
	n := r.u32()
	// The smallest op (a READ) takes 13 bytes: a bound before allocating.
	if int64(n)*13 > int64(len(r.b)) {
		return nil, fmt.Errorf("batch: %w: %d ops in %d bytes", errFrame, n, len(r.b))
	}
	if n == 0 {
		return nil, fmt.Errorf("batch: %w: no ops", errFrame)
	}
	dst = dst[:0]
	for i := range n {
		k := transport.VerbKind(r.u8())
		if r.err == nil && opOperandBytes(k) < 0 {
			return nil, fmt.Errorf("batch: %w: op %d of %d has verb %v, which cannot be posted", errFrame, i, n, k)
		}
		o := batchOp{Op: transport.Op{Kind: k, Addr: transport.GAddr(r.u64())}}
		switch k {
		case transport.VerbRead:
			o.n = r.u32()
		case transport.VerbWrite:
			o.Buf = r.take(int(r.u32()))
		case transport.VerbCAS:
			o.Expect, o.Swap = r.u64(), r.u64()
		case transport.VerbMaskedCAS:
			o.Expect, o.Swap, o.CmpMask, o.SwapMask = r.u64(), r.u64(), r.u64(), r.u64()
		case transport.VerbFAA:
			o.Add = r.u64()
		}
		if r.err != nil {
			return nil, fmt.Errorf("batch: op %d of %d: %w", i, n, r.err)
		}
		dst = append(dst, o)
	}
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("batch: %w", err)
	}
	if rb := batchReplyBytes(dst); rb > MaxFrame-headerBytes {
		return nil, fmt.Errorf("batch: %w: its reply of %d bytes exceeds the %d-byte frame limit", errFrame, rb, MaxFrame)
	}
	return dst, nil
}

// decodeBatchReply copies a batch reply into ops: READ data into Buf, old
// values into Old. The reply must be exactly what ops ask for.
func decodeBatchReply(p []byte, ops []transport.Op) error {
	r := reader{b: p}
	for i := range ops {
		o := &ops[i]
		switch {
		case o.Kind == transport.VerbRead:
			copy(o.Buf, r.take(len(o.Buf)))
		case o.Kind.Atomic():
			o.Old = r.u64()
		}
	}
	if err := r.done(); err != nil {
		return fmt.Errorf("batch reply: %w", err)
	}
	return nil
}

func appendCall(b []byte, id uint64, method uint16, req []byte) []byte {
	b, s := beginFrame(b, frameCall, id)
	b = binary.LittleEndian.AppendUint16(b, method)
	b = append(b, req...)
	return endFrame(b, s)
}

// decodeCall splits a call into its method and request (aliasing p).
func decodeCall(p []byte) (uint16, []byte, error) {
	if len(p) < 2 {
		return 0, nil, fmt.Errorf("call: %w: %d bytes, shorter than a method", errFrame, len(p))
	}
	return binary.LittleEndian.Uint16(p), p[2:], nil
}

func appendAddRegion(b []byte, id uint64, name string, size uint64) []byte {
	b, s := beginFrame(b, frameAddRegion, id)
	b = binary.LittleEndian.AppendUint64(b, size)
	b = appendStr(b, name)
	return endFrame(b, s)
}

func decodeAddRegion(p []byte) (string, uint64, error) {
	r := reader{b: p}
	size := r.u64()
	name := r.str()
	if err := r.done(); err != nil {
		return "", 0, fmt.Errorf("add region: %w", err)
	}
	return name, size, nil
}

func appendRegionReply(b []byte, id uint64, rg transport.Region) []byte {
	b, s := beginFrame(b, frameRegion, id)
	return endFrame(appendRegion(b, rg), s)
}

func decodeRegionReply(p []byte, n transport.NodeID) (transport.Region, error) {
	r := reader{b: p}
	rg := r.region(n)
	if err := r.done(); err != nil {
		return transport.Region{}, fmt.Errorf("region: %w", err)
	}
	return rg, nil
}

func appendInstall(b []byte, id uint64, index string, args []byte) []byte {
	b, s := beginFrame(b, frameInstall, id)
	b = appendStr(b, index)
	return endFrame(append(b, args...), s)
}

func decodeInstall(p []byte) (string, []byte, error) {
	r := reader{b: p}
	name := r.str()
	if r.err != nil {
		return "", nil, fmt.Errorf("install: %w", r.err)
	}
	return name, r.b, nil
}

func appendLayout(b []byte, id uint64) []byte {
	b, s := beginFrame(b, frameLayout, id)
	return endFrame(b, s)
}

func appendU64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }
