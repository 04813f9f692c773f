package splitmix

import "testing"

// The first outputs of SplitMix64 seeded with 0, as the reference
// implementation (Vigna's splitmix64.c) gives them.
func TestReferenceSequence(t *testing.T) {
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	seed := uint64(0)
	for i, w := range want {
		seed += Golden
		if got := Mix(seed); got != w {
			t.Errorf("output %d = %#x, want %#x", i, got, w)
		}
	}
	var b [12]byte
	Fill(b[:], 0)
	if b[0] != 0xe2 || b[8] != 0x6e {
		t.Errorf("Fill(0) = %x, want the sequence big-endian", b)
	}
}
