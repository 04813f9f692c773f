package sherman

import (
	"strings"
	"testing"

	"github.com/dmbench/dmbench/indexes/internal/inner"
	"github.com/dmbench/dmbench/transport"
)

// TestTornImages feeds each variant's check leaf images caught in the
// middle of a WRITE, as a READ racing it could see them, and checks what
// each variant detects: the two-level versions see a WRITE caught at its
// ends but not one whose middle alone landed (the inconsistency Sherman's
// README lists), the CRC sees any, and optlock trusts the lock words;
// with DEX's test (optlock/dex) it lets a lock taken or released during
// the READ pass and falls back on the versions.
func TestTornImages(t *testing.T) {
	f := newFabric(t, "sim", cluster(1, 1, transport.ModePaper))
	unlocked, locked, later := []byte{0, 0, 0, 0, 0, 0, 0, 0}, []byte{1, 0, 0, 0, 0, 0, 0, 0}, []byte{0, 0, 1, 0, 0, 0, 0, 0}
	relocked := []byte{1, 0, 1, 0, 0, 0, 0, 0} // released and taken again
	tamper := map[string]func(l *layout, img []byte){
		"intact":             func(*layout, []byte) {},
		"node front only":    func(l *layout, img []byte) { img[inner.OffFront]++ },
		"entry front only":   func(l *layout, img []byte) { l.entry(img, 3)[0]++ },
		"entry middle only":  func(l *layout, img []byte) { l.entryVal(l.entry(img, 3))[0]++ },
		"sibling field only": func(l *layout, img []byte) { img[inner.OffSibling]++ },
	}
	cases := []struct {
		variant, tamper string
		w1, w2          []byte
		valid, torn     bool // valid: the image passes; torn: a search of entry 3's key re-reads
	}{
		{"versions", "intact", nil, nil, true, false},
		{"versions", "node front only", nil, nil, false, false},
		{"versions", "entry front only", nil, nil, false, true},
		{"versions", "entry middle only", nil, nil, true, false},
		{"versions", "sibling field only", nil, nil, true, false},
		{"crc", "intact", nil, nil, true, false},
		{"crc", "node front only", nil, nil, false, false},
		{"crc", "entry front only", nil, nil, false, false},
		{"crc", "entry middle only", nil, nil, false, false},
		{"crc", "sibling field only", nil, nil, false, false},
		{"optlock", "intact", unlocked, unlocked, true, false},
		{"optlock", "entry middle only", unlocked, unlocked, true, false},
		{"optlock", "intact", locked, locked, false, false},
		{"optlock", "intact", unlocked, later, false, false},
		{"optlock/dex", "intact", unlocked, locked, true, false},
		{"optlock/dex", "intact", unlocked, later, true, false},
		{"optlock/dex", "intact", unlocked, relocked, false, false},
		{"optlock/dex", "intact", locked, locked, false, false},
		{"optlock/dex", "node front only", unlocked, locked, false, false},
		{"optlock/dex", "entry front only", unlocked, later, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.variant+"/"+tc.tamper, func(t *testing.T) {
			variant, check, _ := strings.Cut(tc.variant, "/")
			params := map[string]string{"consistency": variant}
			if check != "" {
				params["optcheck"] = check
			}
			x := build(t, f, params, 0, nil)
			c := x.newClient(f.Setup(1))
			l := &x.l
			img := make([]byte, l.leafBytes)
			l.InitNode(img, 0, key(0), nil, 0)
			for i := range 10 {
				l.writeEntry(l.entry(img, i), key(uint64(i+1)), val(uint64(i)))
			}
			l.setConsistent(img)
			tamper[tc.tamper](l, img)
			w1, w2 := tc.w1, tc.w2
			if w1 == nil {
				w1, w2 = unlocked, unlocked
			}
			if got := c.valid(img, classShared, w1, w2, true); got != (tc.valid && !tc.torn) {
				t.Errorf("valid = %v, want %v", got, tc.valid && !tc.torn)
			}
			if !tc.valid {
				return
			}
			_, found, torn := c.findInLeaf(img, key(4), c.checkEntries(classShared))
			if torn != tc.torn || found == torn {
				t.Errorf("search of entry 3: found %v torn %v, want torn %v", found, torn, tc.torn)
			}
		})
	}
}
