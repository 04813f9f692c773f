package verbs

import (
	"errors"
	"testing"

	"github.com/dmbench/dmbench/transport"
)

// fakeWord is one word of memory with counted verbs; meddle, when set,
// changes the word before verb number meddleAt (from 0), as a racing client
// would between the READ and the CAS.
type fakeWord struct {
	w           uint64
	reads, cass int
	meddleAt    int
	meddle      func(uint64) uint64
	fail        error
}

func (f *fakeWord) tick() {
	if f.meddle != nil && f.reads+f.cass == f.meddleAt {
		f.w = f.meddle(f.w)
	}
}

func (f *fakeWord) readWord(transport.GAddr) (uint64, error) {
	f.tick()
	f.reads++
	return f.w, f.fail
}

func (f *fakeWord) cas(_ transport.GAddr, expect, swap uint64) (uint64, error) {
	f.tick()
	f.cass++
	old := f.w
	if old == expect {
		f.w = swap
	}
	return old, nil
}

func TestMaskedCASFallback(t *testing.T) {
	const lockBit, typeBits = 1, 0xf0
	for _, tc := range []struct {
		name                            string
		word                            uint64
		expect, swap, cmpMask, swapMask uint64
		meddleAt                        int
		meddle                          func(uint64) uint64
		wantOld, wantWord               uint64
		wantReads, wantCASes            int
	}{
		{name: "lock taken: a READ and a CAS", word: 0x30, expect: 0, swap: lockBit, cmpMask: lockBit, swapMask: lockBit,
			wantOld: 0x30, wantWord: 0x31, wantReads: 1, wantCASes: 1},
		{name: "compare bits differ: the READ answers", word: 0x31, expect: 0, swap: lockBit, cmpMask: lockBit, swapMask: lockBit,
			wantOld: 0x31, wantWord: 0x31, wantReads: 1, wantCASes: 0},
		{name: "nothing to change: no CAS", word: 0x31, expect: 1, swap: lockBit, cmpMask: lockBit, swapMask: lockBit,
			wantOld: 0x31, wantWord: 0x31, wantReads: 1, wantCASes: 0},
		{name: "other bits change before the CAS: one more CAS", word: 0x30, expect: 0, swap: lockBit, cmpMask: lockBit, swapMask: lockBit,
			meddleAt: 1, meddle: func(w uint64) uint64 { return w ^ typeBits },
			wantOld: 0xc0, wantWord: 0xc1, wantReads: 1, wantCASes: 2},
		{name: "compare bits change before the CAS: fails with the new word", word: 0x30, expect: 0, swap: lockBit, cmpMask: lockBit, swapMask: lockBit,
			meddleAt: 1, meddle: func(w uint64) uint64 { return w | lockBit },
			wantOld: 0x31, wantWord: 0x31, wantReads: 1, wantCASes: 1},
		{name: "swap mask keeps the other bits", word: 0xabcd_0000_1234, expect: 0x1234, swap: 0x5555_0000_0000, cmpMask: 0xffff, swapMask: 0xffff_0000_0000,
			wantOld: 0xabcd_0000_1234, wantWord: 0x5555_0000_1234, wantReads: 1, wantCASes: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeWord{w: tc.word, meddleAt: tc.meddleAt, meddle: tc.meddle}
			old, err := maskedCAS(f, 8, tc.expect, tc.swap, tc.cmpMask, tc.swapMask)
			if err != nil {
				t.Fatal(err)
			}
			if old != tc.wantOld || f.w != tc.wantWord {
				t.Errorf("old %#x, word %#x; want %#x, %#x", old, f.w, tc.wantOld, tc.wantWord)
			}
			if f.reads != tc.wantReads || f.cass != tc.wantCASes {
				t.Errorf("%d READs and %d CASes; want %d and %d", f.reads, f.cass, tc.wantReads, tc.wantCASes)
			}
			// The native verb's answer on the word the fallback acted on.
			op := transport.MaskedCASOp(8, tc.expect, tc.swap, tc.cmpMask, tc.swapMask)
			if next, _ := op.Apply(old); tc.meddle == nil && next != f.w {
				t.Errorf("word %#x, the native masked CAS on %#x gives %#x", f.w, old, next)
			}
		})
	}
}

func TestMaskedCASFallbackReadError(t *testing.T) {
	boom := errors.New("qp in error state")
	f := &fakeWord{fail: boom}
	if _, err := maskedCAS(f, 8, 0, 1, 1, 1); !errors.Is(err, boom) || f.cass != 0 {
		t.Errorf("err %v after %d CASes; want the READ's error and no CAS", err, f.cass)
	}
}
