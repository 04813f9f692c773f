package blink

import (
	"encoding/binary"
	"testing"
)

// A READ image is accepted only when whole: an image with one word of the
// next version landed, anywhere, fails; a locked image of a whole node is
// accepted, since the lock changes nothing else.
func TestConsistentImages(t *testing.T) {
	l, err := newLayout(8, 8, 1024)
	if err != nil {
		t.Fatal(err)
	}
	old := make([]byte, l.size)
	l.initNode(old, 0, make([]byte, 8), nil, 0)
	for i := range 40 {
		l.leafInsertAt(old, i, binary.BigEndian.AppendUint64(nil, uint64(i)), binary.BigEndian.AppendUint64(nil, uint64(i)))
	}
	seal(old, 7)
	next := append([]byte(nil), old...)
	copy(l.leafVal(next, 20), "newvalue")
	seal(next, 8)
	if !consistent(old) || !consistent(next) {
		t.Fatal("sealed images do not check")
	}
	// the word of next at offset o landed on old
	torn := func(o int) []byte {
		b := append([]byte(nil), old...)
		copy(b[o:o+8], next[o:o+8])
		return b
	}
	locked := append([]byte(nil), old...)
	setRear(locked, rear(old)|lockBit)
	cases := []struct {
		name string
		img  []byte
		want bool
	}{
		{"whole", old, true},
		{"locked, unchanged", locked, true},
		{"crc and header word only", torn(0), false},
		{"front version only", torn(offFront), false},
		{"changed value only", torn(l.hdr + 20*l.leafEntry + 8), false},
		{"rear word only", torn(l.size - rearBytes), false},
	}
	for _, c := range cases {
		if got := consistent(c.img); got != c.want {
			t.Errorf("%s: consistent = %v, want %v", c.name, got, c.want)
		}
	}
}
