package indextest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dmbench/dmbench/indexes"
	"github.com/dmbench/dmbench/transport"
)

// The scans case's size: scanLoaded keys bulk-loaded, scanInserts more
// inserted by the writers (quadrupling the index, so most leaves split
// while scans run), each scanner running scanMin to scanMax scans of up
// to scanLen entries (one in 20 of everything).
const (
	scanLoaded  = 1024
	scanInserts = 3072
	scanMin     = 10
	scanMax     = 150
	scanLen     = 128
)

// write is one write of a key, stamped.
type write struct {
	kind      opKind
	val       []byte // insert, update
	call, ret int64
}

// timeline is everything done to one key, in order: the key has one
// writer, so its writes are sequential.
type timeline struct {
	initial []byte // the loaded value, nil when not loaded
	writes  []write
	// unknown is set when a write returned an unexpected error (already
	// reported): the key's content is then unknown and not checked.
	unknown bool
}

// states calls fn with every content the key may have had at some
// instant of [s, e] (val nil: absent), until fn returns true, and
// reports whether one did. Content j (after write j, or the initial one)
// may be seen in [s, e] if write j was called by e and write j+1, if any,
// had not returned before s. Equal stamps count as concurrent.
func (tl *timeline) states(s, e int64, fn func(val []byte) bool) bool {
	if (len(tl.writes) == 0 || tl.writes[0].ret >= s) && fn(tl.initial) {
		return true
	}
	for j, w := range tl.writes {
		if w.call > e {
			break
		}
		if j+1 < len(tl.writes) && tl.writes[j+1].ret < s {
			continue
		}
		val := w.val
		if w.kind == opDelete {
			val = nil
		}
		if fn(val) {
			return true
		}
	}
	return false
}

func (tl *timeline) String() string {
	var b strings.Builder
	if tl.initial != nil {
		fmt.Fprintf(&b, "loaded %x", tl.initial)
	} else {
		b.WriteString("not loaded")
	}
	for _, w := range tl.writes {
		fmt.Fprintf(&b, "; %s", w.kind)
		if w.val != nil {
			fmt.Fprintf(&b, " %x", w.val)
		}
		fmt.Fprintf(&b, " at [%d, %d]", w.call, w.ret)
	}
	return b.String()
}

// final is the key's content after its last write.
func (tl *timeline) final() []byte {
	if len(tl.writes) == 0 {
		return tl.initial
	}
	w := tl.writes[len(tl.writes)-1]
	if w.kind == opDelete {
		return nil
	}
	return w.val
}

// scanRecord is one scan and what it returned, stamped.
type scanRecord struct {
	who       string
	start     []byte
	n         int
	got       []kv
	err       error
	call, ret int64
}

// testScansAcrossSplits runs writers on one compute node, which insert
// keys in random order into a small bulk-loaded index (splitting leaves)
// and now and then delete or update one of their keys, while the workers
// of the other compute nodes scan from random starts. Every key has one
// writer, and every write and scan is stamped at call and return. Each
// scan's result must be in strictly increasing key order (so without
// duplicates), start at or after its start key, hold no more than n
// entries, and, for the keys in the range it covers (from its start to
// its last key if it returned n entries, to the end of the key space
// otherwise):
//
//   - hold only keys and values that the key had at some instant between
//     the scan's call and return: a key that was never inserted, a value
//     that was never written, a key whose delete returned before the scan
//     began (and was not re-inserted) or a value overwritten before it
//     began is an error;
//   - hold every key that was present throughout the scan: inserted (or
//     loaded) with the insert returning before the scan was called, and
//     not deleted by a delete called before the scan returned.
//
// That is what an index linearizable per key guarantees a scan, which is
// not atomic: keys written during the scan may or may not appear. Then
// every worker of the scanning nodes searches every key and scans, with
// exact expectations.
func testScansAcrossSplits(t *testing.T, c *combo) {
	fx := c.fixture(t, 4, 8, 8)
	nodes := fx.ComputeNodes()
	writers, scanners := nodes[:1], nodes[1:]
	universe := fx.ownedKeys(writers[0], scanLoaded+scanInserts)
	fx.load(t, universe[:scanLoaded])
	timelines := make(map[string]*timeline, len(universe))
	for _, k := range universe {
		v, _ := fx.p.m.get(k)
		timelines[string(k)] = &timeline{initial: v}
	}

	nw := fx.Workers(writers)
	owned := stripe(universe, nw)
	var writing atomic.Int32
	var inserted atomic.Int64
	writing.Store(int32(nw))
	fx.GoAll(writers, func(w Worker, ep transport.Endpoint, c indexes.Client) {
		defer writing.Add(-1)
		fx.write(w, ep, newChecker(c, fx.rep, w.String(), fx.p.ks, fx.p.vs), owned[w.ID], timelines, &inserted)
	})
	ns, sim := fx.Workers(scanners), fx.Fabric.Name() == Sim
	records := make([][]scanRecord, ns)
	fx.GoAll(scanners, func(w Worker, ep transport.Endpoint, c indexes.Client) {
		ch := newChecker(c, fx.rep, w.String(), fx.p.ks, fx.p.vs)
		rng := rand.New(rand.NewPCG(fx.Fabric.Config().Seed, 1<<16|uint64(w.ID)))
		for i := 0; i < scanMax && (i < scanMin || writing.Load() > 0); i++ {
			// On sim, spread the scans over the writers' progress: scan i
			// waits, computing on the scanner's own core, for i/scanMax
			// of the inserts. Scans are slower than inserts and would
			// otherwise all fall in the first few hundred. On real
			// fabrics both run at once anyway.
			for sim && writing.Load() > 0 && inserted.Load() < int64(i*scanInserts/scanMax) {
				ep.Compute(1000)
			}
			r := scanRecord{who: w.String(), start: fx.p.scanStart(rng, uint64(len(universe))), n: 1 + rng.IntN(scanLen)}
			if rng.IntN(20) == 0 {
				r.n = everything
			}
			r.call = fx.Stamp(ep)
			r.got, r.err = ch.scan(r.start, r.n, 0)
			r.ret = fx.Stamp(ep)
			records[w.ID] = append(records[w.ID], r)
		}
	})
	fx.Run(t)

	sorted := sortedCopy(universe)
	var lastWrite int64
	for _, tl := range timelines {
		for _, w := range tl.writes {
			lastWrite = max(lastWrite, w.ret)
		}
	}
	total, during := 0, 0
	for _, rs := range records {
		total += len(rs)
		for i := range rs {
			fx.checkScan(&rs[i], sorted, timelines)
			if rs[i].call < lastWrite {
				during++
			}
		}
	}
	t.Logf("%d scans checked, %d of them begun while %d writers inserted %d keys", total, during, nw, scanInserts)

	for _, k := range universe {
		tl := timelines[string(k)]
		if tl.unknown {
			t.Logf("the final check is skipped: key %x is in an unknown state after a failed write", k)
			return
		}
		if v := tl.final(); v != nil {
			fx.p.m.set(k, v)
		} else {
			fx.p.m.del(k)
		}
	}
	fx.runSpread(t, scanners, fx.p.verify(fx.rng, universe, 20, uint64(len(universe))))
}

// write inserts the keys of mine not loaded yet in random order, counting
// them in inserted; after each insert it deletes one of its live keys with
// probability 1/10 and updates one with probability 1/10. It records every
// write in the key's timeline (keys have one writer, so timelines are not
// shared).
func (fx *fixture) write(w Worker, ep transport.Endpoint, ch *checker, mine [][]byte, timelines map[string]*timeline, inserted *atomic.Int64) {
	rng := rand.New(rand.NewPCG(fx.Fabric.Config().Seed, 2<<16|uint64(w.ID)))
	var live, fresh [][]byte
	for _, k := range mine {
		if timelines[string(k)].initial != nil {
			live = append(live, k)
		} else {
			fresh = append(fresh, k)
		}
	}
	rng.Shuffle(len(fresh), func(i, j int) { fresh[i], fresh[j] = fresh[j], fresh[i] })
	seq := uint64(0)
	do := func(kind opKind, k []byte) bool {
		seq++
		wr := write{kind: kind}
		if kind != opDelete {
			wr.val = Value(uint64(w.ID+1)<<32+seq, fx.p.vs)
		}
		wr.call = fx.Stamp(ep)
		err := ch.write(kind, k, wr.val)
		wr.ret = fx.Stamp(ep)
		tl := timelines[string(k)]
		if err != nil {
			fx.rep.Errorf("%v: %s %x of a live key: %v", w, kind, k, err)
			tl.unknown = true
			return false
		}
		tl.writes = append(tl.writes, wr)
		return true
	}
	for _, k := range fresh {
		if do(opInsert, k) {
			live = append(live, k)
		}
		inserted.Add(1)
		if len(live) == 0 {
			continue
		}
		switch rng.IntN(10) {
		case 0:
			i := rng.IntN(len(live))
			do(opDelete, live[i])
			live = append(live[:i], live[i+1:]...)
		case 1:
			do(opUpdate, live[rng.IntN(len(live))])
		}
	}
}

// checkScan checks one scan against the timelines (see
// testScansAcrossSplits); sorted is every key that may be written, sorted.
func (fx *fixture) checkScan(r *scanRecord, sorted [][]byte, timelines map[string]*timeline) {
	if r.err != nil {
		fx.rep.Errorf("%s: scan from %x, n = %d: %v", r.who, r.start, r.n, r.err)
		return
	}
	where := func() string {
		return fmt.Sprintf("%s: scan from %x, n = %d, at [%d, %d]", r.who, r.start, r.n, r.call, r.ret)
	}
	for i, e := range r.got {
		if i == 0 && bytes.Compare(e.key, r.start) < 0 {
			fx.rep.Errorf("%s: first key %x is below the start key", where(), e.key)
		}
		if i > 0 && bytes.Compare(r.got[i-1].key, e.key) >= 0 {
			fx.rep.Errorf("%s: entry %d key %x follows %x: not strictly increasing (unsorted or duplicated)", where(), i, e.key, r.got[i-1].key)
			return
		}
		tl := timelines[string(e.key)]
		if tl == nil {
			fx.rep.Errorf("%s: entry %d key %x was never inserted", where(), i, e.key)
			continue
		}
		if !tl.unknown && !tl.states(r.call, r.ret, func(v []byte) bool { return v != nil && bytes.Equal(v, e.val) }) {
			fx.rep.Errorf("%s: entry %d %v: the key never held that value during the scan (its writes: %s)", where(), i, e, tl)
		}
	}
	// Walk the keys of the covered range, matching them with the scan's.
	lo := sort.Search(len(sorted), func(i int) bool { return bytes.Compare(sorted[i], r.start) >= 0 })
	j := 0
	for _, k := range sorted[lo:] {
		if len(r.got) == r.n && bytes.Compare(k, r.got[len(r.got)-1].key) > 0 {
			break
		}
		for j < len(r.got) && bytes.Compare(r.got[j].key, k) < 0 {
			j++
		}
		if j < len(r.got) && bytes.Equal(r.got[j].key, k) {
			continue
		}
		tl := timelines[string(k)]
		if !tl.unknown && !tl.states(r.call, r.ret, func(v []byte) bool { return v == nil }) {
			fx.rep.Errorf("%s: missed key %x, present throughout the scan (its writes: %s)", where(), k, tl)
		}
	}
}
