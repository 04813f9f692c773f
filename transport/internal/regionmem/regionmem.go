// Package regionmem allocates the memory behind the fabrics' registered
// regions.
//
// On Linux a region is anonymous memory mapped outside the Go heap: the
// kernel supplies zero pages on first touch, so an untouched region of
// several GiB costs only address space. A make of that size is not as
// cheap: when the runtime reuses heap address space it clears the whole
// allocation up front (a 4 GiB region then took 4.2 GB resident and
// seconds of system time). Release unmaps at once instead of at some later
// collection.
package regionmem
