package tcp

import (
	"bufio"
	"bytes"
	"errors"
	"sync"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// fuzzNode is the memory decoded batches run against: node 0 with a main
// and a device region, the layout a memory node has.
var fuzzNode = sync.OnceValues(func() (*nodeMem, error) {
	return newNodeMem(0, transport.ModePaper, 1<<16, 1<<12, 0, true, nil)
})

// replyTemplate is the batch a fuzzed batch reply answers.
func replyTemplate() []transport.Op {
	return []transport.Op{
		transport.ReadOp(make([]byte, 8), transport.RegionAlign),
		transport.FAAOp(transport.RegionAlign, 1),
		transport.ReadOp(make([]byte, 3), transport.RegionAlign+5),
	}
}

// FuzzDecode feeds arbitrary bytes to every decoder, as a frame stream
// and as one frame body of each type. Nothing may panic; a batch that
// decodes must encode back to the same bytes and run against a node's
// memory without touching anything outside its regions; an error frame
// that decodes must encode back to an error frame that decodes the same.
func FuzzDecode(f *testing.F) {
	g, err := fuzzNode()
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range seedFrames() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := &frameReader{r: bufioReader(data)}
		for {
			if _, _, _, err := fr.next(); err != nil {
				break
			}
		}
		typ, _, p, err := splitFrame(data)
		if err != nil {
			return
		}
		switch typ {
		case frameHello:
			if h, err := decodeHello(p); err == nil {
				if again := appendHello(nil, 0, &h)[lenBytes+headerBytes:]; !bytes.Equal(again, p) {
					t.Errorf("hello %+v encodes to %x, decoded from %x", h, again, p)
				}
			}
		case frameWelcome:
			decodeWelcome(p)
		case frameBatch:
			checkBatch(t, g, p)
		case frameBatchReply:
			decodeBatchReply(p, replyTemplate())
		case frameCall:
			decodeCall(p)
		case frameAddRegion:
			decodeAddRegion(p)
		case frameInstall:
			if name, args, err := decodeInstall(p); err == nil {
				if again := appendInstall(nil, 0, name, args)[lenBytes+headerBytes:]; !bytes.Equal(again, p) {
					t.Errorf("install %q %x encodes to %x, decoded from %x", name, args, again, p)
				}
			}
		case frameRegion:
			decodeRegionReply(p, 0)
		case frameError:
			checkError(t, p)
		}
	})
}

func checkBatch(t *testing.T, g *nodeMem, p []byte) {
	ops, err := decodeBatch(p, nil)
	if err != nil {
		return
	}
	plain := make([]transport.Op, len(ops))
	for i, o := range ops {
		plain[i] = o.Op
		if o.Kind == transport.VerbRead {
			plain[i].Buf = make([]byte, o.n)
		}
	}
	if again := appendBatch(nil, 0, plain)[lenBytes+headerBytes:]; !bytes.Equal(again, p) {
		t.Fatalf("batch of %d ops encodes to %x, decoded from %x", len(ops), again, p)
	}
	out, err := g.serveBatch(ops, nil)
	var ae *transport.AddrError
	switch {
	case err != nil && !errors.As(err, &ae):
		t.Fatalf("batch refused with %v, want an AddrError", err)
	case err == nil && len(out) != batchReplyBytes(ops):
		t.Fatalf("batch reply of %d bytes, want %d", len(out), batchReplyBytes(ops))
	}
}

func checkError(t *testing.T, p []byte) {
	e, err := decodeError(p)
	if err != nil {
		return
	}
	again, err := decodeError(appendError(nil, 0, e)[lenBytes+headerBytes:])
	if err != nil || again.Error() != e.Error() {
		t.Fatalf("error %q re-encoded decodes to %v, %v", e, again, err)
	}
}

// seedFrames are well-formed frame bodies of every type.
func seedFrames() [][]byte {
	body := func(frame []byte) []byte { return frame[lenBytes:] }
	rg := transport.Region{Node: 0, Name: "main", Base: transport.RegionAlign, Size: 1 << 16}
	ops := []transport.Op{
		transport.ReadOp(make([]byte, 8), transport.RegionAlign),
		transport.WriteOp(transport.RegionAlign+8, []byte("hello")),
		transport.CASOp(transport.RegionAlign+16, 0, 1),
		transport.MaskedCASOp(transport.RegionAlign+16, 1, 2, 3, 3),
		transport.FAAOp(transport.RegionAlign+24, 7),
	}
	bad := []transport.Op{transport.FAAOp(transport.RegionAlign+3, 1)}
	return [][]byte{
		body(appendHello(nil, 1, &hello{version: protocolVersion, node: 0, configure: true, fresh: true, main: 1 << 16, device: 1 << 12})),
		body(appendWelcome(nil, 1, &welcome{node: 0, cores: 2, regions: []transport.Region{rg}})),
		body(appendBatch(nil, 2, ops)),
		body(appendBatch(nil, 3, bad)),
		body(appendBatch(nil, 4, ops[:1])),
		body(append(appendU64(append([]byte(nil), frameBatchReply), 5), make([]byte, 19)...)),
		body(appendCall(nil, 6, transport.MethodAllocChunk, appendU64(nil, 4096))),
		body(appendAddRegion(nil, 7, "peer", 4096)),
		body(appendInstall(nil, 8, "dex", []byte(`{"shape":{"key_size":8,"value_size":8}}`))),
		body(appendLayout(nil, 9)),
		body(appendRegionReply(nil, 8, rg)),
		body(appendError(nil, 9, &transport.AddrError{Verb: transport.VerbFAA, Addr: transport.RegionAlign + 3, Len: 8, Reason: "not aligned", Region: &rg})),
		body(appendError(nil, 10, errors.Join(errNoHandler, transport.ErrOutOfMemory))),
		appendBatch(appendBatch(nil, 11, ops[:2]), 12, ops[2:]),
	}
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }
