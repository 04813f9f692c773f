package dlsm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/dmbench/dmbench/cost"
	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// methodCompact is the near-data compaction RPC.
const methodCompact uint16 = 0x444c // "DL"

// compaction is one picked compaction: inputs of level lv and lv+1.
type compaction struct {
	lv         int
	in0, in1   []*table
	lo, hi     []byte
	bottommost bool // no deeper level overlaps: tombstones can go
}

// maxLevelBytes is level lv's size limit.
func (x *Index) maxLevelBytes(lv int) float64 {
	b := float64(levelBaseTables) * float64(x.memBytes)
	for i := 1; i < lv; i++ {
		b *= float64(x.ratio)
	}
	return b
}

func (x *Index) levelBytes(tables []*table) float64 {
	var b float64
	for _, t := range tables {
		b += float64(t.n * x.f.esz)
	}
	return b
}

// pickLocked chooses the most overdue level (LevelDB's compaction score:
// level 0 by table count, deeper levels by bytes against their limit) and
// its inputs; it performs trivial moves itself. s.mu is held.
func (s *shard) pickLocked() *compaction {
	f := &s.x.f
	for {
		v := s.ver
		best, score := -1, 1.0
		for lv := 0; lv < numLevels-1; lv++ {
			var sc float64
			if lv == 0 {
				sc = float64(len(v.levels[0])) / l0Compaction
			} else {
				sc = s.x.levelBytes(v.levels[lv]) / s.x.maxLevelBytes(lv)
			}
			if sc >= score {
				best, score = lv, sc
			}
		}
		if best < 0 {
			return nil
		}
		c := &compaction{lv: best}
		if best == 0 {
			c.in0 = v.levels[0]
		} else {
			tables := v.levels[best]
			i := 0
			if cur := s.cursor[best]; cur != nil {
				for i < len(tables) && bytes.Compare(tables[i].largest(f), cur) <= 0 {
					i++
				}
				if i == len(tables) {
					i = 0
				}
			}
			c.in0 = tables[i : i+1]
		}
		c.lo, c.hi = keyRange(f, c.in0)
		c.in1 = overlaps(f, v.levels[best+1], c.lo, c.hi)
		if len(c.in0) == 1 && len(c.in1) == 0 {
			// Trivial move: the table goes down a level as it is.
			nv := v.clone()
			nv.levels[best] = without(nv.levels[best], c.in0)
			nv.levels[best+1] = insertSorted(f, nv.levels[best+1], c.in0)
			if best > 0 {
				s.cursor[best] = bytes.Clone(c.hi)
			}
			s.ver = nv
			continue
		}
		if len(c.in1) > 0 {
			lo, hi := keyRange(f, c.in1)
			c.lo, c.hi = minKey(c.lo, lo), maxKey(c.hi, hi)
		}
		c.bottommost = true
		for lv := best + 2; lv < numLevels; lv++ {
			if len(overlaps(f, v.levels[lv], c.lo, c.hi)) > 0 {
				c.bottommost = false
			}
		}
		return c
	}
}

func keyRange(f *format, tables []*table) (lo, hi []byte) {
	for _, t := range tables {
		lo, hi = minKey(lo, t.smallest(f)), maxKey(hi, t.largest(f))
	}
	return lo, hi
}

func minKey(a, b []byte) []byte {
	if a == nil || bytes.Compare(b, a) < 0 {
		return b
	}
	return a
}

func maxKey(a, b []byte) []byte {
	if a == nil || bytes.Compare(b, a) > 0 {
		return b
	}
	return a
}

func overlaps(f *format, tables []*table, lo, hi []byte) []*table {
	var out []*table
	for _, t := range tables {
		if bytes.Compare(t.largest(f), lo) >= 0 && bytes.Compare(t.smallest(f), hi) <= 0 {
			out = append(out, t)
		}
	}
	return out
}

func without(tables, drop []*table) []*table {
	return slices.DeleteFunc(tables, func(t *table) bool { return slices.Contains(drop, t) })
}

func insertSorted(f *format, tables, add []*table) []*table {
	tables = append(tables, add...)
	slices.SortFunc(tables, func(a, b *table) int { return bytes.Compare(a.smallest(f), b.smallest(f)) })
	return tables
}

// compact runs compactions while one is due and no other runs: each is
// one RPC to the shard's memory node, whose core merges the input tables
// in its own memory (dLSM's near-data compaction), then one doorbell of
// READs fetches the new tables' index blocks and filters for the table
// cache, and the new version is installed.
func (s *shard) compact(ep transport.Endpoint) error {
	for {
		s.mu.Lock()
		if s.compacting {
			s.mu.Unlock()
			return nil
		}
		c := s.pickLocked()
		if c == nil {
			w := s.wakeLocked()
			s.mu.Unlock()
			wake(w)
			return nil
		}
		s.compacting = true
		s.mu.Unlock()
		ep.SetStep(stepCompaction)
		outs, err := s.remoteCompact(ep, c)
		s.mu.Lock()
		s.compacting = false
		if err == nil {
			nv := s.ver.clone()
			nv.levels[c.lv] = without(nv.levels[c.lv], c.in0)
			nv.levels[c.lv+1] = insertSorted(&s.x.f, without(nv.levels[c.lv+1], c.in1), outs)
			if c.lv > 0 {
				s.cursor[c.lv] = bytes.Clone(c.hi)
			}
			s.ver = nv
		}
		w := s.wakeLocked()
		s.mu.Unlock()
		wake(w)
		if err != nil {
			return err
		}
	}
}

// remoteCompact sends the compaction to the memory node and opens its
// output tables.
func (s *shard) remoteCompact(ep transport.Endpoint, c *compaction) ([]*table, error) {
	f := &s.x.f
	inputs := append(append([]*table(nil), c.in0...), c.in1...) // newest first
	var total uint64
	entries := 0
	for _, t := range inputs {
		total += t.bytes
		entries += t.n
	}
	target := max(1, int(s.x.memBytes)/f.esz)
	capacity := total + uint64(entries/target+2)*uint64(f.bloomBits*8+footerBytes+128)
	out, err := s.x.allocs[s.node].AllocOn(ep, s.mem, capacity, 64)
	if err != nil {
		return nil, wrap("compaction: allocate output", err)
	}
	s.remote.Add(capacity)
	req := binary.LittleEndian.AppendUint64(nil, uint64(out))
	req = binary.LittleEndian.AppendUint64(req, capacity)
	req = binary.LittleEndian.AppendUint32(req, uint32(target))
	req = append(req, boolByte(c.bottommost))
	for _, t := range inputs {
		req = binary.LittleEndian.AppendUint64(req, uint64(t.addr))
		req = binary.LittleEndian.AppendUint32(req, uint32(t.n))
	}
	rep, err := ep.Call(s.mem, methodCompact, req)
	if err != nil {
		return nil, wrap("compaction RPC", err)
	}
	if len(rep)%20 != 0 {
		return nil, fmt.Errorf("dlsm: compaction reply of %d bytes", len(rep))
	}
	type meta struct {
		addr transport.GAddr
		n    int
		buf  []byte
	}
	metas := make([]meta, len(rep)/20)
	ops := make([]transport.Op, len(metas))
	for i := range metas {
		r := rep[i*20:]
		m := meta{addr: transport.GAddr(binary.LittleEndian.Uint64(r)), n: int(binary.LittleEndian.Uint32(r[8:]))}
		m.buf = make([]byte, binary.LittleEndian.Uint32(r[16:]))
		ops[i] = transport.ReadOp(m.buf, m.addr.Add(uint64(binary.LittleEndian.Uint32(r[12:]))))
		metas[i] = m
	}
	if len(ops) > 0 {
		if err := ep.Post(ops...); err != nil {
			return nil, wrap("compaction: read index blocks", err)
		}
	}
	outs := make([]*table, len(metas))
	for i, m := range metas {
		ep.Compute(cost.Copy(len(m.buf)))
		t, err := f.parseMeta(m.addr, m.n, m.buf)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		t.id = s.nextTable
		s.nextTable++
		s.mu.Unlock()
		outs[i] = t
	}
	return outs, nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// compactionHandlers is the near-data compaction handler alone, for a
// memory node in a process of its own (indexes.Spec.Offload): it needs
// nothing of the index but the table format, which the key and value
// sizes and bloombits fix.
func compactionHandlers(s indexes.Shape, p indexes.Params) (map[uint16]transport.Handler, error) {
	x := &Index{f: newFormat(s.KeySize, s.ValueSize, p.Int("bloombits"))}
	return map[uint16]transport.Handler{methodCompact: x.serveCompact}, nil
}

// serve registers the memory nodes' compaction handler, unless the
// instance attached (the builder registered it), and the forwarding
// handler of the compute nodes the instance serves.
func (x *Index) serve() {
	if !x.env.Attach {
		for _, n := range x.mems {
			x.env.Fabric.Handle(n, methodCompact, x.serveCompact)
		}
	}
	if len(x.shards) > 1 || len(x.comps) > 1 {
		for _, n := range x.comps {
			if x.env.Serves(n) {
				x.env.Fabric.Handle(n, methodForward, x.serveForward)
			}
		}
	}
}

// serveCompact merges the input tables in the memory node's own memory
// and writes the output tables there: every byte it touches is local, and
// the merge, filter and index building are charged to the memory node's
// core (dLSM's near-data compaction, the memory-node CPU load DMTree
// section 2.2.3 measures).
func (x *Index) serveCompact(ep transport.Endpoint, req []byte) ([]byte, error) {
	f := &x.f
	if len(req) < 21 || (len(req)-21)%12 != 0 {
		return nil, fmt.Errorf("compaction request of %d bytes", len(req))
	}
	out := transport.GAddr(binary.LittleEndian.Uint64(req))
	capacity := binary.LittleEndian.Uint64(req[8:])
	target := int(binary.LittleEndian.Uint32(req[16:]))
	bottommost := req[20] == 1
	k := (len(req) - 21) / 12
	runs := make([][]record, k)
	inEntries := 0
	for i := range k {
		r := req[21+i*12:]
		addr := transport.GAddr(binary.LittleEndian.Uint64(r))
		n := int(binary.LittleEndian.Uint32(r[8:]))
		buf := make([]byte, n*f.esz)
		if err := ep.Read(buf, addr); err != nil {
			return nil, fmt.Errorf("read input table %v: %w", addr, err)
		}
		run := make([]record, n)
		for j := range n {
			key, kind, seq, val, err := f.parseEntry(buf[j*f.esz:])
			if err != nil {
				return nil, err
			}
			run[j] = record{key: key, kind: kind, seq: seq, val: val}
		}
		runs[i] = run
		inEntries += n
	}
	merged := mergeRuns(runs, bottommost)
	ep.Compute(int64(inEntries)*(cost.NodeSearch(k)+cost.Copy(f.esz)) +
		int64(len(merged))*(cost.HashKey()+cost.Copy(f.esz+f.isz)))
	var rep []byte
	used := uint64(0)
	for lo := 0; lo < len(merged); lo += target {
		im, _ := f.build(merged[lo:min(lo+target, len(merged))])
		if used+im.size() > capacity {
			return nil, fmt.Errorf("compaction output of more than %d bytes", capacity)
		}
		a := out.Add(used)
		img := append(append(append(make([]byte, 0, im.size()), im.data...), im.index...), im.tail...)
		if err := ep.Write(a, img); err != nil {
			return nil, fmt.Errorf("write output table: %w", err)
		}
		used += (im.size() + 63) &^ 63
		rep = binary.LittleEndian.AppendUint64(rep, uint64(a))
		rep = binary.LittleEndian.AppendUint32(rep, uint32(min(target, len(merged)-lo)))
		rep = binary.LittleEndian.AppendUint32(rep, uint32(len(im.data)))
		rep = binary.LittleEndian.AppendUint32(rep, uint32(len(im.index)+len(im.tail)))
	}
	return rep, nil
}

// mergeRuns merges sorted runs, earlier runs newer: a key keeps its
// newest entry, and a tombstone is dropped when nothing older can remain
// below the output level.
func mergeRuns(runs [][]record, bottommost bool) []record {
	pos := make([]int, len(runs))
	var out []record
	for {
		best := -1
		for i, r := range runs {
			if pos[i] < len(r) && (best < 0 || bytes.Compare(r[pos[i]].key, runs[best][pos[best]].key) < 0) {
				best = i
			}
		}
		if best < 0 {
			return out
		}
		rec := runs[best][pos[best]]
		for i, r := range runs {
			if pos[i] < len(r) && bytes.Equal(r[pos[i]].key, rec.key) {
				pos[i]++
			}
		}
		if rec.kind == kindDelete && bottommost {
			continue
		}
		out = append(out, rec)
	}
}
