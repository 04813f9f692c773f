//go:build !(linux && cgo && rdma)

package verbs

import (
	"errors"

	"github.com/dmbench/dmbench/transport"
)

// New would build the verbs fabric; this binary was built without the
// rdma tag (or without cgo, or not for Linux), so it has no libibverbs.
func New(transport.Config, Options) (transport.Fabric, error) {
	return nil, errors.New("verbs: this dmbench was built without RDMA support: rebuild on Linux with CGO_ENABLED=1 and -tags rdma (libibverbs-dev installed; make verbs-check does both), or run on the sim fabric (--fabric sim, the default) or on real processes over TCP (--fabric tcp)")
}
