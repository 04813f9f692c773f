package verbs

import "github.com/dmbench/dmbench/transport/tcp"

// HCAOptions choose the RDMA device, port and addressing of one process.
type HCAOptions struct {
	// Device is the device name (mlx5_0, ...); empty takes the first
	// device libibverbs lists.
	Device string
	// Port is the device port, from 1; 0 means 1.
	Port int
	// UseGID addresses peers by the GID at GIDIndex (RoCE, or routed
	// InfiniBand); without it, by LID (InfiniBand).
	UseGID   bool
	GIDIndex int
}

// Options configure the verbs fabric: the device, and the tcp control
// plane that reaches the memory nodes' servers (dmbench memnode) for node
// ids, layouts, RPCs, the cluster key and the QP exchange.
type Options struct {
	HCA HCAOptions
	TCP tcp.Options
}
