package transport

import (
	"errors"
	"fmt"
)

// Role is what a node is for.
type Role uint8

// The roles.
const (
	RoleMemory Role = iota
	RoleCompute
)

func (r Role) String() string {
	if r == RoleCompute {
		return "compute"
	}
	return "memory"
}

// Mode is the memory semantics of multi-byte accesses.
type Mode uint8

const (
	// ModePaper gives 64-byte cacheline atomicity and applies a WRITE's
	// cachelines in increasing address order: what the papers assume.
	ModePaper Mode = iota
	// ModeStrict makes only aligned 8-byte words atomic; the words of one
	// WRITE land in any order over its transfer time.
	ModeStrict
)

func (m Mode) String() string {
	if m == ModeStrict {
		return "strict"
	}
	return "paper"
}

// ParseMode accepts "paper" and "strict".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "paper":
		return ModePaper, nil
	case "strict":
		return ModeStrict, nil
	}
	return 0, fmt.Errorf("memory mode %q is not one of: paper, strict", s)
}

// CachelineBytes is the atomicity unit of ModePaper.
const CachelineBytes = 64

// Config is the shape of a cluster. Memory nodes come first (ids
// 0..MemoryNodes-1), then compute nodes.
type Config struct {
	ComputeNodes int
	MemoryNodes  int
	// Threads is the number of client threads (cores) per compute node.
	Threads int
	// MemoryCores and ComputeCores are the RPC-handler cores per node.
	MemoryCores  int
	ComputeCores int
	// MemoryBytes and ComputeBytes size each node's "main" region.
	MemoryBytes  uint64
	ComputeBytes uint64
	// DeviceBytes sizes the on-chip "device" region of each memory node;
	// 0 means none.
	DeviceBytes uint64
	Mode        Mode
	Seed        uint64
}

// Validate reports the first field that makes no sense.
func (c Config) Validate() error {
	var errs []error
	if c.MemoryNodes < 1 {
		errs = append(errs, fmt.Errorf("memory nodes = %d: need at least 1", c.MemoryNodes))
	}
	if c.ComputeNodes < 0 {
		errs = append(errs, fmt.Errorf("compute nodes = %d: must not be negative", c.ComputeNodes))
	}
	if c.MemoryNodes+c.ComputeNodes > 1<<16 {
		errs = append(errs, fmt.Errorf("%d nodes: at most 65536", c.MemoryNodes+c.ComputeNodes))
	}
	if c.ComputeNodes > 0 && c.Threads < 1 {
		errs = append(errs, fmt.Errorf("threads = %d: need at least 1 per compute node", c.Threads))
	}
	if c.MemoryCores < 1 {
		errs = append(errs, fmt.Errorf("memory cores = %d: need at least 1", c.MemoryCores))
	}
	if c.ComputeNodes > 0 && c.ComputeCores < 1 {
		errs = append(errs, fmt.Errorf("compute cores = %d: need at least 1", c.ComputeCores))
	}
	if c.MemoryBytes == 0 {
		errs = append(errs, errors.New("memory bytes = 0: each memory node needs a main region"))
	}
	if c.Mode > ModeStrict {
		errs = append(errs, fmt.Errorf("memory mode %d is not paper or strict", c.Mode))
	}
	if len(errs) > 0 {
		return fmt.Errorf("transport: bad cluster config: %w", errors.Join(errs...))
	}
	return nil
}

// NodeCount is the number of nodes.
func (c Config) NodeCount() int { return c.MemoryNodes + c.ComputeNodes }

// Role is the role of node n.
func (c Config) Role(n NodeID) Role {
	if int(n) < c.MemoryNodes {
		return RoleMemory
	}
	return RoleCompute
}

// Cores is the number of RPC-handler cores of node n.
func (c Config) Cores(n NodeID) int {
	if c.Role(n) == RoleMemory {
		return c.MemoryCores
	}
	return c.ComputeCores
}

// MemoryNodeIDs and ComputeNodeIDs list the nodes of each role.
func (c Config) MemoryNodeIDs() []NodeID { return idRange(0, c.MemoryNodes) }
func (c Config) ComputeNodeIDs() []NodeID {
	return idRange(c.MemoryNodes, c.MemoryNodes+c.ComputeNodes)
}

func idRange(lo, hi int) []NodeID {
	ids := make([]NodeID, 0, hi-lo)
	for i := lo; i < hi; i++ {
		ids = append(ids, NodeID(i))
	}
	return ids
}

// Layouts lays out the initial regions of every node: "main" everywhere
// (compute nodes only when ComputeBytes > 0) and "device" on memory nodes
// when DeviceBytes > 0.
func (c Config) Layouts() ([]Layout, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	ls := make([]Layout, c.NodeCount())
	for i := range ls {
		l := &ls[i]
		l.Node = NodeID(i)
		size := c.MemoryBytes
		if c.Role(l.Node) == RoleCompute {
			size = c.ComputeBytes
		}
		if size > 0 {
			if _, err := l.Add("main", size, false); err != nil {
				return nil, err
			}
		}
		if c.Role(l.Node) == RoleMemory && c.DeviceBytes > 0 {
			if _, err := l.Add("device", c.DeviceBytes, true); err != nil {
				return nil, err
			}
		}
	}
	return ls, nil
}
