package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// codec maps go-ycsb's records onto an index's fixed-size keys and values
// (see the package documentation for the layout).
type codec struct {
	keySize     int
	valueSize   int
	fieldCount  int
	fieldLength int
}

// key writes the index key of a go-ycsb key into dst (keySize bytes): the
// key's bytes, zero-padded on the right. Padding preserves byte order, so
// an index scan from a padded key visits the keys go-ycsb would.
func (c *codec) key(dst []byte, key string) error {
	switch {
	case len(key) > c.keySize:
		return fmt.Errorf("key %q is %d bytes, longer than dm.keysize=%d: raise dm.keysize to at least %d", key, len(key), c.keySize, len(key))
	case key == "":
		// The all-zero key may serve an index as its minimum sentinel.
		return fmt.Errorf("empty key: an index key must not be all zero bytes")
	case key[len(key)-1] == 0:
		// Padding would make it equal to the key without its trailing NULs.
		return fmt.Errorf("key %q ends in a NUL byte, which the zero padding to dm.keysize cannot tell apart", key)
	case len(key) == c.keySize && strings.Count(key, "\xff") == c.keySize:
		return fmt.Errorf("key %q is all 0xff bytes, which an index may use as its maximum sentinel", key)
	}
	n := copy(dst, key)
	clear(dst[n:])
	return nil
}

// field returns the number of a field name: i for "field<i>" with
// i < fieldCount, the names go-ycsb's core workload uses.
func (c *codec) field(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, "field")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(digits)
	if err != nil || i < 0 || i >= c.fieldCount || strconv.Itoa(i) != digits {
		return 0, false
	}
	return i, true
}

// value encodes fields into dst (valueSize bytes): field i at offset
// i*fieldLength, cut to fieldLength bytes, zero-padded, and the whole cut to
// valueSize. Fields absent from the map stay zero.
func (c *codec) value(dst []byte, fields map[string][]byte) error {
	clear(dst)
	for name, v := range fields {
		i, ok := c.field(name)
		if !ok {
			return fmt.Errorf("field %q: records have the fields field0 to field%d (fieldcount=%d)", name, c.fieldCount-1, c.fieldCount)
		}
		if lo := i * c.fieldLength; lo < len(dst) {
			copy(dst[lo:min(lo+c.fieldLength, len(dst))], v)
		}
	}
	return nil
}

// fields decodes the fields named in want (all when empty) from a stored
// value. A field is its slot with trailing NULs removed; a field whose slot
// is empty or lies beyond valueSize is absent, as is a name that is no
// field. The returned slices are copies.
func (c *codec) fields(val []byte, want []string) map[string][]byte {
	out := make(map[string][]byte, len(want))
	decode := func(name string, i int) {
		lo := i * c.fieldLength
		if lo >= len(val) {
			return
		}
		if v := bytes.TrimRight(val[lo:min(lo+c.fieldLength, len(val))], "\x00"); len(v) > 0 {
			out[name] = bytes.Clone(v)
		}
	}
	if len(want) == 0 {
		for i := range min(c.fieldCount, (len(val)+c.fieldLength-1)/c.fieldLength) {
			decode("field"+strconv.Itoa(i), i)
		}
		return out
	}
	for _, name := range want {
		if i, ok := c.field(name); ok {
			decode(name, i)
		}
	}
	return out
}
