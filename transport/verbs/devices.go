package verbs

import (
	"slices"
	"strconv"

	"github.com/Mellanox/rdmamap"
)

// Device is an RDMA device of this host and its ports.
type Device struct {
	Name  string
	Ports []int
}

// Devices lists this host's RDMA devices, sorted by name; none where the
// kernel has no RDMA support (no /sys/class/infiniband).
func Devices() []Device {
	names := rdmamap.GetRdmaDeviceList()
	slices.Sort(names)
	devs := make([]Device, 0, len(names))
	for _, n := range names {
		d := Device{Name: n}
		for _, p := range rdmamap.GetPorts(n) {
			if i, err := strconv.Atoi(p); err == nil {
				d.Ports = append(d.Ports, i)
			}
		}
		slices.Sort(d.Ports)
		devs = append(devs, d)
	}
	return devs
}
