package dlsm

import (
	"bytes"
	"fmt"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

func wrap(what string, err error) error { return fmt.Errorf("dlsm: %s: %w", what, err) }

// write applies an insert, update or delete to the shard. Update and
// Delete first check that the key is live, with the memtables and the
// in-memory index blocks only (no verb: the index block holds every key
// and its kind), under the key's stripe lock so that two of them on one
// key cannot interleave.
func (s *shard) write(ep transport.Endpoint, op opKind, key, val []byte) error {
	kind := kindValue
	if op == opDelete {
		kind = kindDelete
	}
	r := record{key: bytes.Clone(key), kind: kind, val: bytes.Clone(val)}
	if kind == kindDelete {
		r.val = nil
	}
	var flush *memtable
	if op == opUpdate || op == opDelete {
		l := &s.stripes[bloomHash(key)%stripes]
		l.Lock(ep)
		if !s.live(key) {
			l.Unlock()
			return indexes.ErrNotFound
		}
		flush = s.put(ep, r)
		l.Unlock()
	} else {
		flush = s.put(ep, r)
	}
	if flush == nil {
		return nil
	}
	// The stripe lock covers the check and the memtable insert only:
	// the flush and compactions this write drives are dLSM's background
	// work, which no Put of the artifact waits for.
	if err := s.flush(ep, flush); err != nil {
		return err
	}
	return s.compact(ep)
}

// put inserts r into the memtable, switching a full memtable to the
// immutable list first (dLSM's optimistic memtable switching: the writer
// that finds it full switches it), and returns the memtable it switched,
// if any. The writer that switched flushes that memtable and, when
// compaction is due and none runs, drives compactions until none is due:
// dmbench has no background threads, so the thread that made the work
// does it (dLSM hands both to background threads). Writes stall while
// the immutable list is full or level 0 is at the stop trigger, and
// sleep once while level 0 is past the slowdown trigger.
func (s *shard) put(ep transport.Endpoint, r record) *memtable {
	f := &s.x.f
	slept := false
	var flush *memtable
	for {
		s.mu.Lock()
		l0 := len(s.ver.levels[0])
		if l0 >= l0Slowdown && !slept {
			s.mu.Unlock()
			slept = true
			ep.SetStep(stepStall)
			ep.Sleep(slowdownNs)
			continue
		}
		m := s.cur
		if sz := m.size.Load(); sz > 0 && sz+int64(f.esz) > s.x.memBytes {
			if len(s.imms) >= s.x.immutables || l0 >= l0Stop {
				ep.SetStep(stepStall)
				s.waitLocked(ep)
				continue
			}
			m.freeze()
			s.imms = append(s.imms, m)
			s.cur = newMemtable(s.nextMem)
			s.nextMem++
			flush = m
			m = s.cur
		}
		r.seq = s.seq.Add(1)
		s.mu.Unlock()
		ep.SetStep(stepMemtable)
		ep.Compute(cost.NodeSearch(m.count()+1) + cost.Copy(f.esz))
		if m.put(r, f.esz) {
			break
		}
	}
	return flush
}

// flush writes an immutable memtable to remote memory as an SSTable with
// one-sided WRITEs (data, index block, filter and footer in one doorbell
// batch) and installs it in level 0 once every older immutable memtable
// is installed, so level 0 stays in memtable order.
func (s *shard) flush(ep transport.Endpoint, m *memtable) error {
	f := &s.x.f
	ep.SetStep(stepFlush)
	recs := m.records()
	ep.Compute(int64(len(recs)) * (cost.Copy(f.esz+f.isz) + cost.HashKey()))
	im, t := f.build(recs)
	addr, err := s.x.allocs[s.node].AllocOn(ep, s.mem, im.size(), 64)
	if err != nil {
		return wrap("flush: allocate table", err)
	}
	s.remote.Add(im.size())
	t.addr = addr
	ops := []transport.Op{transport.WriteOp(addr, im.data), transport.WriteOp(addr.Add(uint64(len(im.data))), im.index),
		transport.WriteOp(addr.Add(uint64(len(im.data)+len(im.index))), im.tail)}
	if len(im.data) == 0 {
		ops = ops[1:]
	}
	if err := ep.Post(ops...); err != nil {
		return wrap("flush: write table", err)
	}
	s.mu.Lock()
	t.id = s.nextTable
	s.nextTable++
	m.tbl = t
	installed := false
	for len(s.imms) > 0 && s.imms[0].tbl != nil {
		nv := s.ver.clone()
		nv.levels[0] = append([]*table{s.imms[0].tbl}, nv.levels[0]...)
		s.ver = nv
		s.imms = s.imms[1:]
		installed = true
	}
	var w []transport.Endpoint
	if installed {
		w = s.wakeLocked()
	}
	s.mu.Unlock()
	wake(w)
	return nil
}

func (v *version) clone() *version {
	nv := &version{}
	for i, l := range v.levels {
		nv.levels[i] = append([]*table(nil), l...)
	}
	return nv
}
