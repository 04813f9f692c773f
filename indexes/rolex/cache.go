package rolex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// nodeState is what one compute node caches: its copy of the model, read
// from the memory pool on the node's first operation (the original
// ROLEX's compute nodes fetch the models from the memory nodes' model
// region), and the synonym leaves it has seen per leaf (the port's
// syn_leaf_addrs), so a search reads a leaf's whole group in one batch.
type nodeState struct {
	fetch transport.Mutex // held across the model READs
	m     atomic.Pointer[model]

	mu sync.Mutex // guards syn; never held across a verb
	// syn is indexed by leaf and grows to the highest leaf set: a slice
	// index, where a map lookup was a tenth of a warm-up search's time.
	syn []chainInfo
	n   int // synonym addresses cached

	keyBytes int
}

// chainInfo is what a node knows of leaf i's synonym chain: the synonym
// leaves in order and, when it has read the whole chain, the first key
// of every leaf of it (primary first; nil for an empty leaf), which lets
// an insert read only the leaf its key belongs to and the next one.
type chainInfo struct {
	addrs  []transport.GAddr
	firsts [][]byte
}

// place is the position in the chain of the leaf key belongs to: the
// last non-empty one whose first key is at or below key, the primary if
// none is. The primary's first key decides nothing, so it is not looked
// at: loading it was a cache miss on every search.
func (ci chainInfo) place(key []byte) int {
	pos := 0
	for i := 1; i < len(ci.firsts); i++ {
		if f := ci.firsts[i]; f != nil && bytes.Compare(f, key) <= 0 {
			pos = i
		}
	}
	return pos
}

func newNodeState() *nodeState { return &nodeState{} }

func (st *nodeState) reset() {
	st.m.Store(nil)
	st.mu.Lock()
	st.syn, st.n = nil, 0
	st.mu.Unlock()
}

func (st *nodeState) bytes() uint64 {
	var b uint64
	if m := st.m.Load(); m != nil {
		b = m.cacheBytes()
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return b + uint64(st.n)*(8+uint64(st.keyBytes))
}

// CopyCaches gives compute node to what compute node from's searches
// built (indexes.CacheCopier): its model, the synonym chains it has seen
// with their byte count, and its combining round counts (the write
// rounds too, which both nodes started with alike). A search changes
// nothing else: it only READs, draws nothing at random and
// allocates nothing (the bulk load's allocator state on the loading node
// is not copied), and the bulk load left every node's cache empty
// (Rolex.load resets them). Node to thus ends as the same searches from
// its own, equal, start would have left it: they would have READ the same
// model from the model region and the same chains from the leaves. The
// model and each chain's address and first-key slices are shared, as
// nothing changes them once cached (setChain stores a new chainInfo,
// which insert builds from clones); the slice of chains is copied, since
// setChain writes into it. The fetch mutex is not copied: it is taken
// only while the node has no model.
func (x *Rolex) CopyCaches(srcIndex indexes.Index, from, to transport.NodeID) (bool, error) {
	s, ok := srcIndex.(*Rolex)
	if !ok {
		return false, nil
	}
	src, dst := s.nodes[from], x.nodes[to]
	src.mu.Lock()
	syn, n := slices.Clone(src.syn), src.n
	src.mu.Unlock()
	dst.m.Store(src.m.Load())
	dst.mu.Lock()
	dst.syn, dst.n = syn, n
	dst.mu.Unlock()
	x.comb.CopyCounts(s.comb, from, to)
	return true, nil
}

// chain returns what is cached of leaf i's synonym chain.
func (st *nodeState) chain(i int) chainInfo {
	st.mu.Lock()
	defer st.mu.Unlock()
	if i >= len(st.syn) {
		return chainInfo{}
	}
	return st.syn[i]
}

func (st *nodeState) setChain(i int, c chainInfo) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if i >= len(st.syn) {
		st.syn = append(st.syn, make([]chainInfo, i+1-len(st.syn))...)
	}
	st.n += len(c.addrs) - len(st.syn[i].addrs)
	st.syn[i] = c
}

// model returns the node's model, reading it from the memory pool first
// if this node has none yet: the root word, the region's header, then
// its body in one doorbell batch.
func (c *client) model() (*model, error) {
	if m := c.st.m.Load(); m != nil {
		c.ep.Compute(cost.CacheLookup())
		return m, nil
	}
	c.st.fetch.Lock(c.ep)
	defer c.st.fetch.Unlock()
	if m := c.st.m.Load(); m != nil {
		return m, nil
	}
	word := make([]byte, 8)
	if err := c.ep.Read(word, c.x.root); err != nil {
		return nil, fmt.Errorf("reading the model root: %w", err)
	}
	region := transport.GAddr(binary.LittleEndian.Uint64(word))
	header := make([]byte, headerBytes)
	if err := c.ep.Read(header, region); err != nil {
		return nil, fmt.Errorf("reading the model header: %w", err)
	}
	_, _, _, _, size := unmarshalHeader(header)
	body := make([]byte, size)
	const piece = 1 << 20
	var ops []transport.Op
	for o := 0; o < len(body); o += piece {
		ops = append(ops, transport.ReadOp(body[o:min(o+piece, len(body))], region.Add(uint64(headerBytes+o))))
	}
	if len(ops) > 0 {
		if err := c.ep.Post(ops...); err != nil {
			return nil, fmt.Errorf("reading the model: %w", err)
		}
	}
	m, err := unmarshalModel(c.g, c.x.eps, header, body)
	if err != nil {
		return nil, err
	}
	c.ep.Compute(cost.Copy(len(body)))
	c.st.m.Store(m)
	return m, nil
}
