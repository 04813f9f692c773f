package dlsm

import (
	"sync"
	"sync/atomic"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/transport"
)

// stripes serialises the check-then-write of Update and Delete per key.
const stripes = 256

// cacheShardBits and cacheShards give the table cache's shard count:
// dLSM's ShardedLRUCache (include/TimberSaw/cache.h, kNumShardBits = 6;
// LevelDB's is 4), which picks a shard by the top bits of the hash.
const (
	cacheShardBits = 6
	cacheShards    = 1 << cacheShardBits
)

// shard is the LSM tree of one compute node: its memtable and immutable
// memtables, and the version (the SSTables of every level) whose index
// blocks and filters it keeps. Only its owner's threads and RPC cores
// touch it.
type shard struct {
	x    *Index
	id   int
	node transport.NodeID // owning compute node
	mem  transport.NodeID // memory node holding its SSTables

	mu         sync.Mutex // guards the fields below; never held across a verb or Compute
	cur        *memtable
	imms       []*memtable // oldest first
	ver        *version
	compacting bool
	waiters    []transport.Endpoint
	nextMem    uint64
	nextTable  uint64
	cursor     [numLevels][]byte // compact_pointer_: where level i's next compaction starts

	seq     atomic.Uint64
	stripes [stripes]transport.Mutex
	cache   [cacheShards]transport.Mutex // the table cache's shard locks

	// Two cache lines of the compute node's RDMA_Manager (one DB per
	// compute node, so one shard per node) that every Get reading a
	// table entry writes: rdmaMgr holds the reference count of the
	// shared_ptr<RDMA_Manager> that Table::InternalGet and ReadKVPair
	// each copy from Env::Default() (an increment before the READ and a
	// decrement after it, each), and cqMap the reader count of the
	// std::shared_mutex qp_cq_map_mutex that poll_completion takes
	// shared for every completion it polls. Neither is a lock a Get
	// waits on: an atomic read-modify-write moves the line, and a
	// node's threads take turns on it.
	rdmaMgr transport.Line
	cqMap   transport.Line

	remote atomic.Uint64 // remote bytes allocated for this shard
}

// version is an immutable list of levels; a change installs a new one.
// Level 0 is newest first and may overlap; levels 1+ are sorted by key
// and disjoint.
type version struct {
	levels [numLevels][]*table
}

func newShard(x *Index, id int, node, mem transport.NodeID) *shard {
	s := &shard{x: x, id: id, node: node, mem: mem, ver: &version{}}
	// The shards of dLSM's LRU cache take a SpinMutex (util/cache.cc,
	// util/mutexlock.h: compare-and-swap, pause, yield after 100 tries).
	for i := range s.cache {
		s.cache[i].Kind = transport.LockSpin
	}
	s.cur = newMemtable(0)
	s.nextMem = 1
	return s
}

// view is what a read works on: the memtables and version at one instant.
type view struct {
	mems []*memtable // newest first
	ver  *version
}

func (s *shard) view() view {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := view{mems: make([]*memtable, 0, 1+len(s.imms)), ver: s.ver}
	v.mems = append(v.mems, s.cur)
	for i := len(s.imms) - 1; i >= 0; i-- {
		v.mems = append(v.mems, s.imms[i])
	}
	return v
}

// wait parks ep until the next flush or compaction installs.
func (s *shard) waitLocked(ep transport.Endpoint) {
	s.waiters = append(s.waiters, ep)
	s.mu.Unlock()
	ep.Park()
}

func (s *shard) wakeLocked() []transport.Endpoint {
	w := s.waiters
	s.waiters = nil
	return w
}

func wake(w []transport.Endpoint) {
	for _, ep := range w {
		ep.Unpark()
	}
}

// lookup finds key's newest entry: memtables, then level 0 newest first,
// then one table per deeper level. A table is consulted through the
// table cache, its filter and its index block, all on the compute node;
// only a key found in a table costs a verb, the READ of its entry, which
// the artifact issues whatever the entry's kind (Table::InternalGet
// compares only the user key of the index entry before reading).
//
// The shared lines a Get writes are touched in the artifact's order:
// per table, the metadata's reference counts (t.ref) when
// Version::ForEachOverlapping, State::Match, last_file_read and
// TableCache::Get copy its shared_ptr, when InternalGet locks its
// weak_ptr twice (the table type, then the metadata for the READ), and
// when those copies are dropped; per READ, the RDMA_Manager's reference
// count twice on each side of it and its completion-map lock once.
// Consecutive touches of one line cost one transfer unless another core
// took the line in between (transport.Line).
func (s *shard) lookup(ep transport.Endpoint, key []byte, wantVal bool) (val []byte, found bool, err error) {
	f := &s.x.f
	v := s.view()
	ep.SetStep(stepMemtable)
	for _, m := range v.mems {
		ep.Compute(cost.NodeSearch(m.count() + 1))
		if kind, val, ok := m.get(key); ok {
			return val, kind == kindValue, nil
		}
	}
	ep.SetStep(stepSSTable)
	for lv, tables := range v.ver.levels {
		if lv > 0 && len(tables) > 0 {
			ep.Compute(cost.NodeSearch(len(tables)))
			tables = overlapping(f, tables, key)
		}
		for _, t := range tables {
			t.ref.Touch(ep) // the shared_ptr copies down to TableCache::Get
			s.openTable(ep, t)
			ep.Compute(t.bloom.probeCost())
			if !t.bloom.mayContain(key) {
				s.closeTable(ep, t)
				t.ref.Touch(ep) // the copies dropped
				continue
			}
			t.ref.Touch(ep) // remote_table.lock() for the table type
			ep.Compute(cost.NodeSearch(t.n))
			i, ok := t.find(f, key)
			if !ok || !wantVal {
				s.closeTable(ep, t)
				t.ref.Touch(ep)
				if !ok {
					continue
				}
				return nil, t.kinds[i] == kindValue, nil
			}
			val, found, err := s.readEntry(ep, t, i)
			s.closeTable(ep, t)
			t.ref.Touch(ep)
			return val, found, err
		}
	}
	return nil, false, nil
}

// live reports whether key's newest entry is a value, looking where
// lookup looks but charging nothing and leaving the table cache as it
// was: it is the check Update and Delete owe dmbench's API, which the
// artifact's blind Put and Delete never make (see the package doc).
func (s *shard) live(key []byte) bool {
	f := &s.x.f
	v := s.view()
	for _, m := range v.mems {
		if kind, _, ok := m.get(key); ok {
			return kind == kindValue
		}
	}
	for lv, tables := range v.ver.levels {
		if lv > 0 {
			tables = overlapping(f, tables, key)
		}
		for _, t := range tables {
			if i, ok := t.find(f, key); ok {
				return t.kinds[i] == kindValue
			}
		}
	}
	return false
}

// readEntry READs entry i of t as Table::InternalGet and ReadKVPair do:
// copy the RDMA_Manager's shared_ptr, lock the table's metadata, copy
// the RDMA_Manager again, post the READ and take the completion map's
// lock shared to find the CQ to poll; then drop the copies.
func (s *shard) readEntry(ep transport.Endpoint, t *table, i int) ([]byte, bool, error) {
	f := &s.x.f
	s.rdmaMgr.Touch(ep)
	t.ref.Touch(ep)
	s.rdmaMgr.Touch(ep)
	s.cqMap.Touch(ep)
	buf := make([]byte, f.esz)
	if err := ep.Read(buf, t.entryAddr(f, i)); err != nil {
		return nil, false, wrap("read entry", err)
	}
	s.rdmaMgr.Touch(ep)
	t.ref.Touch(ep)
	s.rdmaMgr.Touch(ep)
	_, kind, _, val, err := f.parseEntry(buf)
	if err != nil {
		return nil, false, err
	}
	if kind != kindValue {
		return nil, false, nil
	}
	return val, true, nil
}

// openTable finds t in the table cache: LevelDB's sharded LRU cache, whose
// Lookup hashes the table number, then takes its shard's lock for the
// hash lookup and the reference count, so a node's threads reading the
// same few tables contend on a few shard locks (the "complex LRU cache"
// DMTree section 5.2.1 blames for dLSM's searches). closeTable is the
// matching Release, which locks the shard again to drop the reference.
// The lock is never held across a verb: InternalGet runs between the two.
func (s *shard) openTable(ep transport.Endpoint, t *table) {
	ep.Compute(cost.HashKey())
	m := s.cacheLock(t)
	m.Lock(ep)
	ep.Compute(cost.CacheLookup())
	m.Unlock()
}

func (s *shard) closeTable(ep transport.Endpoint, t *table) {
	m := s.cacheLock(t)
	m.Lock(ep)
	ep.Compute(cost.CachelineTransfer())
	m.Unlock()
}

// cacheLock is the lock of the table-cache shard that holds t.
func (s *shard) cacheLock(t *table) *transport.Mutex {
	return &s.cache[(t.id*0x9e3779b97f4a7c15)>>(64-cacheShardBits)]
}

// overlapping returns the table of a sorted level whose range holds key.
func overlapping(f *format, tables []*table, key []byte) []*table {
	lo, hi := 0, len(tables)
	for lo < hi {
		m := (lo + hi) / 2
		if string(tables[m].largest(f)) < string(key) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(tables) && string(tables[lo].smallest(f)) <= string(key) {
		return tables[lo : lo+1]
	}
	return nil
}

// footprint is the compute-side bytes (memtables, index blocks, filters)
// and the remote bytes the shard has allocated.
func (s *shard) footprint() (local, remote uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	local = uint64(s.cur.size.Load())
	for _, m := range s.imms {
		local += uint64(m.size.Load())
	}
	for _, tables := range s.ver.levels {
		for _, t := range tables {
			local += t.localBytes()
		}
	}
	return local, s.remote.Load()
}
