package transport

import "fmt"

// NodeID names a node of the cluster. Ids are dense from 0.
type NodeID uint16

// GAddr is a global address: [16-bit node][48-bit offset]. Zero is nil.
type GAddr uint64

const offsetBits = 48

// OffsetMask selects the offset bits of a GAddr.
const OffsetMask = 1<<offsetBits - 1

// RegionAlign is the alignment of every region's base offset; the first
// RegionAlign bytes of each node's address space are never mapped, so the
// zero GAddr (node 0, offset 0) is invalid.
const RegionAlign = 4096

// Addr builds a global address.
func Addr(n NodeID, off uint64) GAddr { return GAddr(uint64(n)<<offsetBits | off&OffsetMask) }

// Node is the node an address lives on.
func (a GAddr) Node() NodeID { return NodeID(a >> offsetBits) }

// Offset is the byte offset of an address within its node.
func (a GAddr) Offset() uint64 { return uint64(a) & OffsetMask }

// Add returns the address n bytes further on.
func (a GAddr) Add(n uint64) GAddr { return a + GAddr(n) }

// IsNil reports whether a is the nil address.
func (a GAddr) IsNil() bool { return a == 0 }

func (a GAddr) String() string {
	if a == 0 {
		return "nil"
	}
	return fmt.Sprintf("%d:%#x", a.Node(), a.Offset())
}

// Region is a registered, contiguous range of one node's memory.
type Region struct {
	Node   NodeID
	Name   string // "main", "device" or a name given to AddRegion
	Base   GAddr  // first byte
	Size   uint64 // bytes
	Device bool   // on-chip NIC memory: faster atomics, tiny
}

// End is the first address past the region.
func (r Region) End() GAddr { return r.Base.Add(r.Size) }

// Contains reports whether [a, a+n) lies inside the region.
func (r Region) Contains(a GAddr, n uint64) bool {
	return a >= r.Base && uint64(a-r.Base)+n <= r.Size
}

func (r Region) String() string {
	return fmt.Sprintf("%q on node %d [%#x, %#x)", r.Name, r.Node, r.Base.Offset(), r.End().Offset())
}

// AddrError is returned by a verb whose address is nil, lies outside every
// region of its node, runs past the end of its region, or (for atomics) is
// not 8-byte aligned.
type AddrError struct {
	Verb   VerbKind
	Addr   GAddr
	Len    uint64
	Reason string
	Region *Region // the region the access started in, if any
}

func (e *AddrError) Error() string {
	s := fmt.Sprintf("transport: %s of %d bytes at %v: %s", e.Verb, e.Len, e.Addr, e.Reason)
	if e.Region != nil {
		s += " (region " + e.Region.String() + ")"
	}
	return s
}

// Layout is the set of regions of one node, in address order. Fabrics share
// it so that every fabric lays out and checks addresses identically.
type Layout struct {
	Node    NodeID
	Regions []Region
}

// Add appends a region of size bytes after the existing ones.
func (l *Layout) Add(name string, size uint64, device bool) (Region, error) {
	if size == 0 {
		return Region{}, fmt.Errorf("transport: region %q on node %d: size must be positive", name, l.Node)
	}
	for _, r := range l.Regions {
		if r.Name == name {
			return Region{}, fmt.Errorf("transport: region %q already exists on node %d", name, l.Node)
		}
	}
	base := uint64(RegionAlign)
	if n := len(l.Regions); n > 0 {
		base = alignUp(l.Regions[n-1].End().Offset(), RegionAlign)
	}
	if base+size > OffsetMask {
		return Region{}, fmt.Errorf("transport: region %q of %d bytes does not fit the 48-bit address space of node %d", name, size, l.Node)
	}
	r := Region{Node: l.Node, Name: name, Base: Addr(l.Node, base), Size: size, Device: device}
	l.Regions = append(l.Regions, r)
	return r, nil
}

// Find returns the index of the region holding [a, a+n) or an *AddrError.
// Atomics must also be 8-byte aligned.
func (l *Layout) Find(v VerbKind, a GAddr, n uint64) (int, error) {
	if a == 0 {
		return -1, &AddrError{Verb: v, Addr: a, Len: n, Reason: "nil address"}
	}
	for i := range l.Regions {
		r := &l.Regions[i]
		if a < r.Base || a >= r.End() {
			continue
		}
		if uint64(a-r.Base)+n > r.Size {
			return -1, &AddrError{Verb: v, Addr: a, Len: n, Reason: "runs past the end of its region", Region: r}
		}
		if v.Atomic() && a%8 != 0 {
			return -1, &AddrError{Verb: v, Addr: a, Len: n, Reason: "atomic on an address that is not 8-byte aligned", Region: r}
		}
		return i, nil
	}
	return -1, &AddrError{Verb: v, Addr: a, Len: n, Reason: fmt.Sprintf("outside every region of node %d %s", a.Node(), l.describe())}
}

func (l *Layout) describe() string {
	s := "("
	for i, r := range l.Regions {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s [%#x, %#x)", r.Name, r.Base.Offset(), r.End().Offset())
	}
	return s + ")"
}

// Lookup returns the named region.
func (l *Layout) Lookup(name string) (Region, error) {
	for _, r := range l.Regions {
		if r.Name == name {
			return r, nil
		}
	}
	names := make([]string, len(l.Regions))
	for i, r := range l.Regions {
		names[i] = r.Name
	}
	return Region{}, fmt.Errorf("transport: node %d has no region %q (it has %v)", l.Node, name, names)
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) &^ (a - 1) }
