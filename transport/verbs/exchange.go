package verbs

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/tcp"
)

// MethodConnect is the control-plane RPC that connects a client's RC QP
// to a memory node: the request is a ConnectRequest, the reply a
// ConnectReply. It travels over the tcp fabric's connections to the node's
// server (dmbench memnode), in transport's reserved method range.
const MethodConnect uint16 = transport.MethodReserved + 0x10

// QPInfo is what the two ends of an RC QP tell each other to connect it:
// the port's LID (InfiniBand) and GID (RoCE, or routed InfiniBand), the
// QP number and the first packet sequence number.
type QPInfo struct {
	LID uint16
	GID [16]byte
	QPN uint32
	PSN uint32
}

// RemoteRegion is one registered region of a memory node as RDMA reaches
// it: the virtual address of its first byte in the serving process and
// its remote key. A ConnectReply lists them in the node's layout order.
type RemoteRegion struct {
	Addr uint64
	RKey uint32
	Size uint64
}

// ConnectRequest asks a memory node for a QP facing QP, which belongs to
// a client on node From.
type ConnectRequest struct {
	From transport.NodeID
	QP   QPInfo
}

// ConnectReply is the memory node's QP, now in RTS and facing the
// client's, and its regions.
type ConnectReply struct {
	QP      QPInfo
	Regions []RemoteRegion
}

const (
	qpInfoBytes       = 2 + 16 + 4 + 4
	remoteRegionBytes = 8 + 4 + 8
	// maxRegions bounds a reply's region list, so that a corrupt count
	// cannot make the decoder allocate without bound.
	maxRegions = 1 << 12
)

func appendQPInfo(b []byte, q QPInfo) []byte {
	b = binary.LittleEndian.AppendUint16(b, q.LID)
	b = append(b, q.GID[:]...)
	b = binary.LittleEndian.AppendUint32(b, q.QPN)
	return binary.LittleEndian.AppendUint32(b, q.PSN)
}

func decodeQPInfo(b []byte) QPInfo {
	var q QPInfo
	q.LID = binary.LittleEndian.Uint16(b)
	copy(q.GID[:], b[2:18])
	q.QPN = binary.LittleEndian.Uint32(b[18:])
	q.PSN = binary.LittleEndian.Uint32(b[22:])
	return q
}

// Encode is the request's wire form.
func (r ConnectRequest) Encode() []byte {
	b := binary.LittleEndian.AppendUint16(make([]byte, 0, 2+qpInfoBytes), uint16(r.From))
	return appendQPInfo(b, r.QP)
}

// DecodeConnectRequest reads a request, or says what is wrong with it.
func DecodeConnectRequest(b []byte) (ConnectRequest, error) {
	if len(b) != 2+qpInfoBytes {
		return ConnectRequest{}, fmt.Errorf("verbs: connect request of %d bytes, want %d", len(b), 2+qpInfoBytes)
	}
	return ConnectRequest{From: transport.NodeID(binary.LittleEndian.Uint16(b)), QP: decodeQPInfo(b[2:])}, nil
}

// Encode is the reply's wire form.
func (r ConnectReply) Encode() []byte {
	b := appendQPInfo(make([]byte, 0, qpInfoBytes+2+len(r.Regions)*remoteRegionBytes), r.QP)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(r.Regions)))
	for _, g := range r.Regions {
		b = binary.LittleEndian.AppendUint64(b, g.Addr)
		b = binary.LittleEndian.AppendUint32(b, g.RKey)
		b = binary.LittleEndian.AppendUint64(b, g.Size)
	}
	return b
}

// DecodeConnectReply reads a reply, or says what is wrong with it.
func DecodeConnectReply(b []byte) (ConnectReply, error) {
	if len(b) < qpInfoBytes+2 {
		return ConnectReply{}, fmt.Errorf("verbs: connect reply of %d bytes, shorter than its %d-byte header", len(b), qpInfoBytes+2)
	}
	r := ConnectReply{QP: decodeQPInfo(b)}
	n := int(binary.LittleEndian.Uint16(b[qpInfoBytes:]))
	rest := b[qpInfoBytes+2:]
	if n > maxRegions || len(rest) != n*remoteRegionBytes {
		return ConnectReply{}, fmt.Errorf("verbs: connect reply lists %d regions in %d bytes, want %d bytes (at most %d regions)", n, len(rest), n*remoteRegionBytes, maxRegions)
	}
	for i := range n {
		p := rest[i*remoteRegionBytes:]
		r.Regions = append(r.Regions, RemoteRegion{Addr: binary.LittleEndian.Uint64(p), RKey: binary.LittleEndian.Uint32(p[8:]), Size: binary.LittleEndian.Uint64(p[12:])})
	}
	return r, nil
}

// NodeMemory is what a memory node's server exposes for the verbs fabric
// to register its regions (tcp.ServerConfig.OnMemory hands it over): the
// node's layout and the bytes behind each region, which stay where they
// are until the server replaces or releases them.
type NodeMemory = tcp.Memory

// ErrNoDevice is the error of opening the fabric on a host without an
// RDMA device: ibv_get_device_list failing with ENOSYS (no kernel
// support) or listing nothing.
var ErrNoDevice = errors.New("verbs: no RDMA device on this host (libibverbs lists none); run on the sim fabric (--fabric sim, the default) or on real processes over TCP (--fabric tcp)")
