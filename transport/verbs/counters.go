package verbs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SysfsRoot is where Linux lists RDMA devices; ReadPortCounters takes the
// root as a parameter so that tests read a fake tree instead.
const SysfsRoot = "/sys/class/infiniband"

// wordCounters are the port counters the InfiniBand spec keeps in units of
// 4-byte words (PortXmitData and PortRcvData, and their per-lane
// variants), not bytes.
var wordCounters = map[string]bool{
	"port_xmit_data": true, "port_rcv_data": true,
	"port_multicast_xmit_data": true, "port_multicast_rcv_data": true,
	"port_unicast_xmit_data": true, "port_unicast_rcv_data": true,
}

// PortCounters are one port's hardware counters as sysfs shows them:
// Counters from ports/<port>/counters (the InfiniBand PMA counters) and
// HW from ports/<port>/hw_counters (driver-specific, such as mlx5's
// out_of_sequence and local_ack_timeout_err), by file name, raw.
type PortCounters struct {
	Device   string
	Port     int
	Counters map[string]uint64
	HW       map[string]uint64
}

// TxBytes and RxBytes are port_xmit_data and port_rcv_data converted from
// the 4-byte words sysfs counts them in to bytes.
func (c PortCounters) TxBytes() uint64 { return c.Counters["port_xmit_data"] * 4 }
func (c PortCounters) RxBytes() uint64 { return c.Counters["port_rcv_data"] * 4 }

// Bytes returns counter name in bytes: the word counters times 4, any
// other counter of Counters or HW as it is (a count, not bytes), and false
// when the port has no such counter.
func (c PortCounters) Bytes(name string) (uint64, bool) {
	if v, ok := c.Counters[name]; ok {
		if wordCounters[name] {
			return v * 4, true
		}
		return v, true
	}
	v, ok := c.HW[name]
	return v, ok
}

// Sub is what the counters moved from earlier to c: a run reads them
// before and after. A counter missing from earlier counts from zero; a
// counter that went down (a reset, or a 32-bit counter that wrapped)
// reads as its later value.
func (c PortCounters) Sub(earlier PortCounters) PortCounters {
	diff := func(now, then map[string]uint64) map[string]uint64 {
		out := make(map[string]uint64, len(now))
		for k, v := range now {
			if w := then[k]; w <= v {
				out[k] = v - w
			} else {
				out[k] = v
			}
		}
		return out
	}
	return PortCounters{Device: c.Device, Port: c.Port, Counters: diff(c.Counters, earlier.Counters), HW: diff(c.HW, earlier.HW)}
}

// ReadPortCounters reads the counters of port of device under root (use
// SysfsRoot on a real host). A port without hw_counters (drivers that
// keep none) has an empty HW; a port without counters, or a counter file
// that does not hold a number, is an error naming the file.
func ReadPortCounters(root, device string, port int) (PortCounters, error) {
	dir := filepath.Join(root, device, "ports", strconv.Itoa(port))
	c := PortCounters{Device: device, Port: port}
	var err error
	if c.Counters, err = readCounterDir(filepath.Join(dir, "counters")); err != nil {
		return PortCounters{}, fmt.Errorf("verbs: counters of %s port %d: %w", device, port, err)
	}
	c.HW, err = readCounterDir(filepath.Join(dir, "hw_counters"))
	if errors.Is(err, os.ErrNotExist) {
		c.HW, err = map[string]uint64{}, nil
	}
	if err != nil {
		return PortCounters{}, fmt.Errorf("verbs: hw_counters of %s port %d: %w", device, port, err)
	}
	return c, nil
}

func readCounterDir(dir string) (map[string]uint64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make(map[string]uint64, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		file := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s holds %q, not a counter", file, strings.TrimSpace(string(b)))
		}
		out[e.Name()] = v
	}
	return out, nil
}
