package ideal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

func init() {
	indexes.Register(indexes.Spec{
		Name:    "ideal",
		Paper:   "DMTree (FAST'26) section 2.2, Figure 3: Expected",
		Summary: "the Expected bound: one READ per search, two verbs per insert and update",
		Oracle:  "the Expected bound finds every key through a directory all compute nodes share in process memory at no cost, which no set of processes can have; run it on the sim or local fabric",
		New:     New,
	})
}

const stripes = 1024

// Ideal is the Expected bound.
type Ideal struct {
	env    indexes.Env
	klen   int // key bytes
	elen   int // entry bytes read and written
	stride int // slot spacing
	allocs []*transport.Allocator

	mu  sync.RWMutex // guards dir; never held across a verb
	dir *directory

	writers [stripes]transport.Mutex
	// atomicEntry says an entry's WRITE lands whole: paper memory mode and
	// an entry inside one cacheline. Updates then hold their stripe's lock
	// only to check the key and count themselves in updating; inserts and
	// deletes wait, under the lock, for the stripe's updates to finish.
	atomicEntry bool
	updating    [stripes]atomic.Int32
}

// slot is one key of a scan and its oracle entry.
type slot struct {
	key []byte
	entry
}

// New builds an empty Expected bound.
func New(env indexes.Env, _ indexes.Params) (indexes.Index, error) {
	if env.KeySize <= 0 || env.ValueSize < 0 {
		return nil, fmt.Errorf("key size %d and value size %d: need a positive key size", env.KeySize, env.ValueSize)
	}
	e := env.KeySize + env.ValueSize + 8
	stride := 64
	for stride/2 >= e {
		stride /= 2
	}
	if e > 64 {
		stride = (e + 63) / 64 * 64
	}
	cfg := env.Fabric.Config()
	x := &Ideal{env: env, klen: env.KeySize, elen: e, stride: stride, dir: newDirectory(env.KeySize, env.Records),
		atomicEntry: cfg.Mode == transport.ModePaper && stride <= transport.CachelineBytes}
	n := cfg.NodeCount()
	x.allocs = make([]*transport.Allocator, n)
	for i := range x.allocs {
		x.allocs[i] = transport.NewAllocator(env.Fabric, 0)
	}
	return x, nil
}

// Info describes the bound.
func (x *Ideal) Info() indexes.Info {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return indexes.Info{
		Name: "ideal", Paper: "DMTree (FAST'26) section 2.2, Figure 3: Expected",
		Params: indexes.Params{}, MemoryBytes: uint64(x.dir.size()) * uint64(x.stride),
	}
}

// Uncached is true: the oracle is the index's only state, and a search
// reads it without changing it.
func (x *Ideal) Uncached() bool { return true }

// BulkLoad writes kvs into contiguous slot arrays, one run per memory node
// in turn, and records them in the oracle.
func (x *Ideal) BulkLoad(ep transport.Endpoint, kvs iter.Seq2[[]byte, []byte]) error {
	const run = 1 << 16 // slots per contiguous array
	mems := x.env.Fabric.Config().MemoryNodeIDs()
	buf := make([]byte, 0, run*x.stride)
	var base transport.GAddr
	n := 0
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		err := ep.Write(base, buf)
		buf = buf[:0]
		return err
	}
	var prev []byte
	for k, v := range kvs {
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("ideal: bulk load keys not in increasing order at %x", k)
		}
		prev = append(prev[:0], k...)
		if n%run == 0 {
			if err := flush(); err != nil {
				return err
			}
			a, err := x.allocs[0].AllocOn(ep, mems[(n/run)%len(mems)], run*uint64(x.stride), 64)
			if err != nil {
				return fmt.Errorf("ideal: bulk load: %w", err)
			}
			base = a
		}
		a := base.Add(uint64(len(buf)))
		buf = buf[:len(buf)+x.stride]
		x.encode(buf[len(buf)-x.stride:], k, v)
		if len(k) != x.klen {
			return fmt.Errorf("ideal: bulk load key %x: %d bytes, the index holds %d-byte keys", k, len(k), x.klen)
		}
		x.dir.put(k, entry{addr: a, live: true})
		n++
	}
	return flush()
}

// encode fills a slot: key, value, check word.
func (x *Ideal) encode(dst, key, val []byte) {
	copy(dst, key)
	copy(dst[x.klen:], val)
	binary.LittleEndian.PutUint64(dst[x.elen-8:], check(dst[:x.elen-8]))
}

func check(kv []byte) uint64 { return cost.CRC(kv) | 1 }

// NewClient makes a client.
func (x *Ideal) NewClient(ep transport.Endpoint) indexes.Client {
	return &client{x: x, ep: ep, buf: make([]byte, x.elen)}
}

type client struct {
	x   *Ideal
	ep  transport.Endpoint
	buf []byte

	// a scan's buffers, reused from scan to scan
	from, keys, raw, out []byte
	batch                []slot
	ops                  []transport.Op
}

func (x *Ideal) lookup(key []byte) (entry, bool) {
	x.mu.RLock()
	e, ok := x.dir.get(key)
	x.mu.RUnlock()
	return e, ok
}

func (x *Ideal) record(key []byte, e entry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.dir.put(key, e)
}

// stripe is the stripe of key's writer lock, by the key's FNV-1a hash.
func stripe(key []byte) uint32 {
	h := uint32(2166136261)
	for _, b := range key {
		h = (h ^ uint32(b)) * 16777619
	}
	return h % stripes
}

// lockWriter takes the writer lock of key's stripe for an insert or a
// delete, and waits for the stripe's updates under way to finish: none
// starts while the lock is held, so the key's liveness stays as each of
// them found it until its WRITE has landed.
func (c *client) lockWriter(key []byte) *transport.Mutex {
	i := stripe(key)
	mu := &c.x.writers[i]
	mu.Lock(c.ep)
	for c.x.updating[i].Load() > 0 {
		c.ep.Backoff(cost.CachelineTransfer())
	}
	return mu
}

// readEntry READs the entry at a until it is not torn and reports whether
// it holds key.
func (c *client) readEntry(a transport.GAddr, key []byte) (bool, error) {
	x := c.x
	for {
		if err := c.ep.Read(c.buf, a); err != nil {
			return false, err
		}
		ck := binary.LittleEndian.Uint64(c.buf[x.elen-8:])
		if ck == 0 {
			return false, nil
		}
		if ck == check(c.buf[:x.elen-8]) {
			return bytes.Equal(c.buf[:x.klen], key), nil
		}
	}
}

func (c *client) Search(key []byte) ([]byte, bool, error) {
	s, ok := c.x.lookup(key)
	if !ok || !s.live {
		return nil, false, nil
	}
	found, err := c.readEntry(s.addr, key)
	if err != nil || !found {
		return nil, false, err
	}
	return bytes.Clone(c.buf[c.x.klen : c.x.elen-8]), true, nil
}

func (c *client) Insert(key, val []byte) error {
	x := c.x
	if len(key) != x.klen {
		return fmt.Errorf("ideal: insert of key %x: %d bytes, the index holds %d-byte keys", key, len(key), x.klen)
	}
	defer c.lockWriter(key).Unlock()
	e, ok := x.lookup(key)
	if !ok {
		a, err := x.allocs[c.ep.Node()].Alloc(c.ep, uint64(x.stride), 64)
		if err != nil {
			return fmt.Errorf("ideal: insert: %w", err)
		}
		e = entry{addr: a}
	}
	// The Expected insert's READ that finds the empty slot.
	if err := c.ep.Read(c.buf, e.addr); err != nil {
		return err
	}
	x.encode(c.buf, key, val)
	if err := c.ep.Write(e.addr, c.buf); err != nil {
		return err
	}
	e.live = true
	x.record(key, e)
	return nil
}

// modify finds the live entry of key, under the key's writer lock, and
// makes the READ of it that the Expected update and delete make. The
// caller unlocks mu when it is not nil.
func (c *client) modify(key []byte) (e entry, mu *transport.Mutex, err error) {
	mu = c.lockWriter(key)
	e, ok := c.x.lookup(key)
	if !ok || !e.live {
		mu.Unlock()
		return e, nil, indexes.ErrNotFound
	}
	if _, err := c.readEntry(e.addr, key); err != nil {
		mu.Unlock()
		return e, nil, err
	}
	return e, mu, nil
}

// Update READs and WRITEs the entry. Where the entry's WRITE lands whole,
// concurrent updates of one key need not exclude one another: memory
// orders their WRITEs and a reader sees one of them whole, so the bound's
// update is the two RDMA requests of section 2.2.3 and a hot key's writers
// do not wait for one another. They only keep inserts and deletes of the
// key out while they run (lockWriter), taking the stripe's lock just to
// check the key and count themselves. Otherwise an update serialises
// with every writer of the key, as modify does.
func (c *client) Update(key, val []byte) error {
	if !c.x.atomicEntry {
		e, mu, err := c.modify(key)
		if err != nil {
			return err
		}
		defer mu.Unlock()
		c.x.encode(c.buf, key, val)
		return c.ep.Write(e.addr, c.buf)
	}
	i := stripe(key)
	mu := &c.x.writers[i]
	mu.Lock(c.ep)
	e, ok := c.x.lookup(key)
	if !ok || !e.live {
		mu.Unlock()
		return indexes.ErrNotFound
	}
	c.x.updating[i].Add(1)
	mu.Unlock()
	defer c.x.updating[i].Add(-1)
	if _, err := c.readEntry(e.addr, key); err != nil {
		return err
	}
	c.x.encode(c.buf, key, val)
	return c.ep.Write(e.addr, c.buf)
}

func (c *client) Delete(key []byte) error {
	e, mu, err := c.modify(key)
	if err != nil {
		return err
	}
	defer mu.Unlock()
	var zero [8]byte
	if err := c.ep.Write(e.addr.Add(uint64(c.x.elen-8)), zero[:]); err != nil {
		return err
	}
	e.live = false
	c.x.record(key, e) // keep the slot: a re-insert reuses it, so a search holding the old address stays right
	return nil
}

// Scan reads the next live entries the oracle lists, one READ per run of
// contiguous slots, and skips entries deleted meanwhile.
func (c *client) Scan(start []byte, n int, fn func(key, val []byte) bool) error {
	x := c.x
	c.from = append(c.from[:0], start...)
	inclusive := true
	for n > 0 {
		batch := c.collect(inclusive, n)
		if len(batch) == 0 {
			return nil
		}
		entries, err := c.readRuns(batch)
		if err != nil {
			return err
		}
		for i, s := range batch {
			e := entries[i*x.elen : (i+1)*x.elen]
			ck := binary.LittleEndian.Uint64(e[x.elen-8:])
			if ck != 0 && ck != check(e[:x.elen-8]) { // torn: read it alone
				live, err := c.readEntry(s.addr, s.key)
				if err != nil {
					return err
				}
				copy(e, c.buf)
				if !live {
					ck = 0
				}
			}
			if ck == 0 {
				continue
			}
			n--
			if !fn(bytes.Clone(e[:x.klen]), bytes.Clone(e[x.klen:x.elen-8])) || n == 0 {
				return nil
			}
		}
		c.from, inclusive = append(c.from[:0], batch[len(batch)-1].key...), false
	}
	return nil
}

// collect lists up to n live slots from c.from on, in the client's
// buffers: valid until its next collect.
func (c *client) collect(inclusive bool, n int) []slot {
	x := c.x
	x.mu.RLock()
	defer x.mu.RUnlock()
	c.keys, c.batch = c.keys[:0], c.batch[:0]
	x.dir.ascend(c.from, inclusive, func(key []byte, e entry) bool {
		if !e.live {
			return true
		}
		c.keys = append(c.keys, key...)
		c.batch = append(c.batch, slot{entry: e})
		return len(c.batch) < n
	})
	for i := range c.batch {
		c.batch[i].key = c.keys[i*x.klen : (i+1)*x.klen]
	}
	return c.batch
}

// readRuns READs the entries of batch, one READ per run of slots that are
// contiguous in memory, all in one doorbell batch, and returns them packed
// back to back in the client's buffer.
func (c *client) readRuns(batch []slot) ([]byte, error) {
	x := c.x
	c.raw = grow(c.raw, len(batch)*x.stride)
	c.ops = c.ops[:0]
	for i := 0; i < len(batch); {
		j := i + 1
		for j < len(batch) && batch[j].addr == batch[j-1].addr.Add(uint64(x.stride)) {
			j++
		}
		c.ops = append(c.ops, transport.ReadOp(c.raw[i*x.stride:(j-1)*x.stride+x.elen], batch[i].addr))
		i = j
	}
	err := c.ep.Post(c.ops...)
	clear(c.ops) // do not keep the buffers reachable through stale ops
	if err != nil {
		return nil, err
	}
	c.out = grow(c.out, len(batch)*x.elen)
	for i := range batch {
		copy(c.out[i*x.elen:], c.raw[i*x.stride:i*x.stride+x.elen])
	}
	return c.out, nil
}

// grow returns b resized to n bytes, reallocated only when too small.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
