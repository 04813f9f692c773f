package main

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// TestTuneGC checks that tuneGC sets the collector only where the
// environment leaves it to the program.
func TestTuneGC(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      map[string]string
		percent  int
		limitSet bool
	}{
		{"defaults", nil, gcPercent, physicalMemory() > 0},
		{"GOGC wins", map[string]string{"GOGC": "150"}, 100, physicalMemory() > 0},
		{"GOMEMLIMIT wins", map[string]string{"GOMEMLIMIT": "1GiB"}, gcPercent, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
				t.Setenv(k, "") // restored after the test
				if v, ok := tc.env[k]; ok {
					os.Setenv(k, v)
				} else {
					os.Unsetenv(k)
				}
			}
			prevPercent := debug.SetGCPercent(100)
			prevLimit := debug.SetMemoryLimit(math.MaxInt64)
			t.Cleanup(func() {
				debug.SetGCPercent(prevPercent)
				debug.SetMemoryLimit(prevLimit)
			})
			tuneGC()
			if got := debug.SetGCPercent(100); got != tc.percent {
				t.Errorf("GC percent %d, want %d", got, tc.percent)
			}
			limit := debug.SetMemoryLimit(math.MaxInt64)
			if set := limit != math.MaxInt64; set != tc.limitSet {
				t.Errorf("memory limit %d: set %v, want %v", limit, set, tc.limitSet)
			}
		})
	}
}

// TestGrowthFor checks that the heap's growth shrinks with the live heap
// so that the garbage between collections stays under gcHeadroom, from
// gcPercent down to Go's default.
func TestGrowthFor(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, gcPercent},
		{20 << 20, gcPercent},
		{128 << 20, gcPercent},
		{256 << 20, 200},
		{512 << 20, 100},
		{4 << 30, 100},
	} {
		if got := growthFor(tc.live); got != tc.want {
			t.Errorf("growthFor(%d MiB) = %d, want %d", tc.live>>20, got, tc.want)
		}
	}
}
