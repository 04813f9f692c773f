//go:build !(linux && cgo && rdma)

package verbs

import (
	"errors"

	"github.com/dmbench/dmbench/transport"
)

// errNoRDMA says that this binary was built without the rdma tag (or
// without cgo, or not for Linux), so it has no libibverbs.
var errNoRDMA = errors.New("verbs: this dmbench was built without RDMA support: rebuild on Linux with CGO_ENABLED=1 and -tags rdma (libibverbs-dev installed; make verbs-check does both), or run on the sim fabric (--fabric sim, the default) or on real processes over TCP (--fabric tcp)")

// New would build the verbs fabric.
func New(transport.Config, Options) (transport.Fabric, error) { return nil, errNoRDMA }

// Responder would serve a memory node's regions to the verbs fabric.
type Responder struct{}

// NewResponder would register mem with the device.
func NewResponder(HCAOptions, NodeMemory) (*Responder, error) { return nil, errNoRDMA }

// Handler would serve MethodConnect.
func (*Responder) Handler() transport.Handler {
	return func(transport.Endpoint, []byte) ([]byte, error) { return nil, errNoRDMA }
}

// Close releases nothing.
func (*Responder) Close() error { return nil }
