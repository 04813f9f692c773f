package regionmem

import (
	"fmt"
	"syscall"
)

// Alloc returns size zeroed bytes and the function that releases them.
// The bytes must not be touched after release.
func Alloc(size uint64) ([]byte, func() error, error) {
	b, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, nil, fmt.Errorf("map %d bytes of region memory: %w", size, err)
	}
	// Huge pages: a simulated verb touches a random spot of a region of
	// up to several GiB, and with 4 KiB pages nearly every one missed the
	// TLB (on a VM, a two-dimensional page walk). Advice only: without
	// transparent huge pages the region works the same.
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	return b, func() error { return syscall.Munmap(b) }, nil
}
