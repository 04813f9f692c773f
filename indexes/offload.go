package indexes

import (
	"encoding/json"
	"fmt"

	"github.com/dmbench/dmbench/transport"
)

// Shape is what every process of a cluster knows of an index's data
// without the index: the fixed key and value sizes.
type Shape struct {
	KeySize   int `json:"key_size"`
	ValueSize int `json:"value_size"`
}

// Installer is a fabric whose memory nodes may run in processes of their
// own (tcp's dmbench memnode): Install has memory node n make the named
// index's memory-node handlers (Spec.Offload) from args, an encoding of
// its shape and parameters, and serve them. A node in this process needs
// no installing: the index registered its handlers there with Handle.
type Installer interface {
	Install(n transport.NodeID, index string, args []byte) error
}

// offloadArgs is what Install carries.
type offloadArgs struct {
	Shape  Shape  `json:"shape"`
	Params Params `json:"params"`
}

// install has every memory node of f that runs in a process of its own
// serve the handlers of the index spec built with p in env.
func (s Spec) install(env Env, p Params) error {
	in, ok := env.Fabric.(Installer)
	if !ok || s.Offload == nil {
		return nil
	}
	args, err := json.Marshal(offloadArgs{Shape{env.KeySize, env.ValueSize}, p})
	if err != nil {
		return err
	}
	for _, n := range env.Fabric.Config().MemoryNodeIDs() {
		if err := in.Install(n, s.Name, args); err != nil {
			return fmt.Errorf("installing %s's memory-node handlers on memory node %d: %w", s.Name, n, err)
		}
	}
	return nil
}

// Offloads makes the memory-node handlers of the registered index named
// index from args, as Install carries them: what a memory node in a
// process of its own runs (dmbench memnode). An index without any has
// none to install, and that is an error here: nobody asks for them.
func Offloads(index string, args []byte) (map[uint16]transport.Handler, error) {
	spec, err := Lookup(index)
	if err != nil {
		return nil, err
	}
	if spec.Offload == nil {
		return nil, fmt.Errorf("index %s runs no handlers on memory nodes", index)
	}
	var a offloadArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("index %s: handler arguments: %w", index, err)
	}
	p, err := spec.Resolve(a.Params)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", index, err)
	}
	hs, err := spec.Offload(a.Shape, p)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", index, err)
	}
	return hs, nil
}
