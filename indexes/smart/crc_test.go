package smart

import (
	"hash/crc64"
	"math/rand/v2"
	"testing"
)

// TestCRCUpdate checks the sliced CRC against hash/crc64's: leaves
// written by one must pass the check of the other.
func TestCRCUpdate(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 100)
	for range 2000 {
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		n, crc := rng.IntN(len(buf)+1), rng.Uint64()
		if got, want := crcUpdate(crc, buf[:n]), crc64.Update(crc, crcTable, buf[:n]); got != want {
			t.Fatalf("%d bytes from %#x: %#x, want %#x", n, crc, got, want)
		}
	}
}
