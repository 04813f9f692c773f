package main

import (
	"errors"
	"fmt"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/dmbench/dmbench/transport"
	"github.com/dmbench/dmbench/transport/tcp"
	"github.com/dmbench/dmbench/transport/verbs"
)

// deviceFlags choose the RDMA device of dmbench memnode --verbs and
// dmbench run --fabric verbs.
var deviceFlags = []cli.Flag{
	&cli.StringFlag{Name: "verbs-device", Usage: "verbs: RDMA `DEVICE` (mlx5_0, ...); empty takes the first"},
	&cli.IntFlag{Name: "verbs-port", Value: 1, Usage: "verbs: device `PORT`, from 1"},
	&cli.IntFlag{Name: "verbs-gid-index", Value: -1, Usage: "verbs: address peers by the GID at this `INDEX` (RoCE); -1 addresses them by LID (InfiniBand)"},
}

// verbsFlags are dmbench memnode's flags for serving RDMA clients.
var verbsFlags = append([]cli.Flag{
	&cli.BoolFlag{Name: "verbs", Usage: "also serve the verbs fabric: register the regions with the RDMA device and answer its QP exchange (needs a dmbench built with -tags rdma)"},
}, deviceFlags...)

// hcaOptions reads deviceFlags.
func hcaOptions(ctx *cli.Context) (verbs.HCAOptions, error) {
	if ctx.Int("verbs-port") < 1 {
		return verbs.HCAOptions{}, fmt.Errorf("--verbs-port %d: ports count from 1", ctx.Int("verbs-port"))
	}
	return verbs.HCAOptions{Device: ctx.String("verbs-device"), Port: ctx.Int("verbs-port"),
		UseGID: ctx.Int("verbs-gid-index") >= 0, GIDIndex: max(ctx.Int("verbs-gid-index"), 0)}, nil
}

// verbsServer registers a memory node's regions with the RDMA device as
// the server lays them out, and answers the verbs fabric's QP exchange
// with the responder of the latest layout. Earlier responders stay open:
// clients connected to them keep their QPs until the node stops.
type verbsServer struct {
	hca        verbs.HCAOptions
	mu         sync.Mutex
	responders []*verbs.Responder
}

// newVerbsServer checks at start that the device opens, so that a memory
// node without one fails at once, naming the alternatives.
func newVerbsServer(ctx *cli.Context) (*verbsServer, error) {
	hca, err := hcaOptions(ctx)
	if err != nil {
		return nil, err
	}
	probe, err := verbs.NewResponder(hca, noMemory{})
	if err != nil {
		return nil, fmt.Errorf("--verbs: %w", err)
	}
	return &verbsServer{hca: hca}, probe.Close()
}

// onMemory is the server's tcp.ServerConfig.OnMemory.
func (v *verbsServer) onMemory(m tcp.Memory) error {
	r, err := verbs.NewResponder(v.hca, m)
	if err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.responders = append(v.responders, r)
	return nil
}

// handler answers MethodConnect with the latest responder.
func (v *verbsServer) handler(ep transport.Endpoint, req []byte) ([]byte, error) {
	v.mu.Lock()
	var r *verbs.Responder
	if n := len(v.responders); n > 0 {
		r = v.responders[n-1]
	}
	v.mu.Unlock()
	if r == nil {
		return nil, errors.New("verbs: this memory node holds no regions yet")
	}
	return r.Handler()(ep, req)
}

func (v *verbsServer) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	var errs []error
	for _, r := range v.responders {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

// noMemory is the empty layout the start-up probe registers.
type noMemory struct{}

func (noMemory) Layout() transport.Layout { return transport.Layout{} }
func (noMemory) RegionBytes(int) []byte   { return nil }
