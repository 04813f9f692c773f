package verbs

import (
	"os"
	"testing"
)

// Devices reports what sysfs holds: nothing on a host without RDMA
// support (this project's CI machines), every device otherwise.
func TestDevicesMatchSysfs(t *testing.T) {
	entries, err := os.ReadDir("/sys/class/infiniband")
	devs := Devices()
	if err != nil {
		if len(devs) != 0 {
			t.Errorf("no /sys/class/infiniband (%v), yet Devices() = %v", err, devs)
		}
		t.Skipf("no RDMA support on this host: %v", err)
	}
	if len(devs) != len(entries) {
		t.Errorf("Devices() = %v, sysfs lists %d devices", devs, len(entries))
	}
}
