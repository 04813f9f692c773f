package inner

import (
	"encoding/binary"
	"fmt"

	"github.com/dmbench/dmbench/transport"
)

// The root pointer is the first word of memory node 0's meta area, the
// start of its main region. It holds the root's address with the root's
// level in the low bits, which node alignment leaves zero, so that one
// CAS installs both and one READ learns both (Sherman's new-root
// broadcast carries the level too).
const rootLevelMask = nodeAlign - 1

// RootWord packs a root's address and level into the root pointer.
func RootWord(a transport.GAddr, lvl int) uint64 { return uint64(a) | uint64(lvl) }

// DecodeRoot unpacks the root pointer.
func DecodeRoot(w uint64) (transport.GAddr, int) {
	return transport.GAddr(w &^ rootLevelMask), int(w & rootLevelMask)
}

// Setup is where an index on f builds itself: an endpoint on the first
// compute node (memory node 0 on a fabric without compute nodes), an
// allocator for it, and the start of memory node 0's meta area, whose
// first word is the root pointer.
func Setup(f transport.Fabric) (ep transport.Endpoint, mem *transport.Allocator, meta transport.GAddr, err error) {
	cfg := f.Config()
	setupNode := transport.NodeID(0)
	if cfg.ComputeNodes > 0 {
		setupNode = transport.NodeID(cfg.MemoryNodes)
	}
	main, err := f.Region(0, "main")
	if err != nil {
		return nil, nil, 0, fmt.Errorf("meta area: %w", err)
	}
	return f.Setup(setupNode), transport.NewAllocator(f, 0), main.Base, nil
}

// InitRoot publishes leaf, the image of an empty root leaf spanning the
// key space, through ep unless the root pointer at rootPtr names a root
// already: it READs the pointer and, if it is zero, allocates the leaf
// with alloc, WRITEs it and CASes the pointer from zero, so that of the
// processes building one index the first one's root counts.
func InitRoot(ep transport.Endpoint, rootPtr transport.GAddr, leaf []byte, alloc func() (transport.GAddr, error)) error {
	var w [8]byte
	if err := ep.Read(w[:], rootPtr); err != nil {
		return fmt.Errorf("reading the root pointer: %w", err)
	}
	if binary.LittleEndian.Uint64(w[:]) != 0 {
		return nil
	}
	a, err := alloc()
	if err != nil {
		return fmt.Errorf("allocating the root leaf: %w", err)
	}
	if err := ep.Write(a, leaf); err != nil {
		return fmt.Errorf("writing the root leaf: %w", err)
	}
	if _, err := ep.CAS(rootPtr, 0, RootWord(a, 0)); err != nil {
		return fmt.Errorf("publishing the root leaf: %w", err)
	}
	return nil
}

// WriteRoot WRITEs the root pointer: the last step of a bulk load, which
// replaces the empty root New made.
func WriteRoot(ep transport.Endpoint, rootPtr, root transport.GAddr, lvl int) error {
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], RootWord(root, lvl))
	if err := ep.Write(rootPtr, w[:]); err != nil {
		return fmt.Errorf("writing the root pointer: %w", err)
	}
	return nil
}
