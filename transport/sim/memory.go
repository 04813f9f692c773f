package sim

import (
	"encoding/binary"

	"github.com/dmbench/dmbench/transport"
)

// Memory semantics. READs and atomics take effect at their arrival
// instant. A WRITE that spans more than one atomicity unit (a 64-byte
// cacheline in paper mode, an 8-byte word in strict mode) lands in two
// halves: the first at arrival, the second when its payload has crossed
// into memory (its length at line rate), so a READ arriving in between
// sees it torn. In paper mode the first half is the lower lines, as the
// papers assume writes land in increasing address order; in strict mode it
// is a random half of the words. A later op on the same QP lands the
// pending half first, because one QP's ops take effect in order.

// tornWrite is a WRITE whose second half is pending.
type tornWrite struct {
	q      *qp    // the QP it was written on
	start  uint64 // offset of the written address within its node
	mem    []byte // destination, from the written address on
	data   []byte // the caller's buffer: stable until the WRITE completes
	split  int    // paper mode: bytes applied in the first half
	seed   uint64 // strict mode: which words land first
	strict bool
	done   bool
}

// applyAtomic applies an atomic to the word at mem[0:8].
func applyAtomic(mem []byte, op *transport.Op) {
	old := binary.LittleEndian.Uint64(mem)
	if v, changed := op.Apply(old); changed {
		binary.LittleEndian.PutUint64(mem, v)
	}
	op.Old = old
}

// applyNow performs a verb on mem at once and whole: a local access or a
// setup endpoint's verb.
func applyNow(mem []byte, op *transport.Op) {
	switch op.Kind {
	case transport.VerbRead:
		copy(op.Buf, mem)
	case transport.VerbWrite:
		copy(mem, op.Buf)
	default:
		applyAtomic(mem, op)
	}
}

// applyLocal performs a verb on the caller's own node at once and returns
// its cost on the caller's core: a memory access and a copy.
func (f *Fabric) applyLocal(mem []byte, op *transport.Op) int64 {
	applyNow(mem, op)
	return f.localAccess + int64(float64(op.Len())*f.localPerByte)
}

// write applies a WRITE arriving now on QP q, tearing it when it spans
// more than one atomicity unit. It returns the time its last byte lands
// (now when it lands whole).
func (f *Fabric) write(q *qp, mem []byte, op *transport.Op) int64 {
	data := op.Buf
	unit := uint64(transport.CachelineBytes)
	strict := f.cfg.Mode == transport.ModeStrict
	if strict {
		unit = 8
	}
	start := op.Addr.Offset()
	first, last := start/unit, (start+uint64(len(data))-1)/unit
	if len(data) == 0 || first == last {
		copy(mem, data)
		return f.now
	}
	tw := tornWrite{q: q, start: start, mem: mem, data: data, strict: strict}
	if strict {
		tw.seed = f.rng.Uint64()
		tw.apply(true)
	} else {
		half := (last - first + 1) / 2
		tw.split = int((first+half)*unit - start)
		copy(mem, data[:tw.split])
	}
	slot := f.newTorn(tw)
	q.torn = append(q.torn, slot)
	landed := f.now + max(1, int64(len(data))*f.byteSvc)
	f.schedule(landed, evTorn, nil, slot)
	return landed
}

// apply copies the words of a strict-mode torn write that land in the
// first half (first) or the second.
func (tw *tornWrite) apply(first bool) {
	for i := 0; i < len(tw.data); {
		// the bytes up to the next 8-byte boundary form one word
		a := tw.start + uint64(i)
		n := min(int(8-a%8), len(tw.data)-i)
		w := a / 8
		if (mix64(tw.seed^w)&1 == 0) == first {
			copy(tw.mem[i:i+n], tw.data[i:i+n])
		}
		i += n
	}
}

// mix64 is SplitMix64's finaliser: a cheap deterministic bit mixer.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func (f *Fabric) newTorn(tw tornWrite) int32 {
	if n := len(f.free); n > 0 {
		slot := f.free[n-1]
		f.free = f.free[:n-1]
		f.torn[slot] = tw
		return slot
	}
	f.torn = append(f.torn, tw)
	return int32(len(f.torn) - 1)
}

// landTorn applies the pending half of a torn write once.
func (f *Fabric) landTorn(slot int32) {
	tw := &f.torn[slot]
	if tw.done {
		return
	}
	tw.done = true
	if tw.strict {
		tw.apply(false)
	} else {
		copy(tw.mem[tw.split:], tw.data[tw.split:])
	}
}

// flushTorn lands every pending half written earlier on q.
func (f *Fabric) flushTorn(q *qp) {
	for _, slot := range q.torn {
		f.landTorn(slot)
	}
	q.torn = q.torn[:0]
}

// finishTorn is the evTorn event: land the half if no later op on its QP
// already did, and free the slot.
func (f *Fabric) finishTorn(slot int32) {
	f.landTorn(slot)
	q := f.torn[slot].q
	for i, s := range q.torn {
		if s == slot {
			q.torn = append(q.torn[:i], q.torn[i+1:]...)
			break
		}
	}
	f.torn[slot] = tornWrite{}
	f.free = append(f.free, slot)
}
