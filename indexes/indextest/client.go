package indextest

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/indexes"
)

// opKind is the type of one operation.
type opKind uint8

const (
	opSearch opKind = iota
	opInsert
	opUpdate
	opDelete
	opScan
)

var opNames = [...]string{"search", "insert", "update", "delete", "scan"}

func (k opKind) String() string { return opNames[k] }

// checker drives one worker's index client and checks the contract of
// every call that does not depend on other clients: sizes of what comes
// back, that the index keeps none of the caller's slices (it passes keys
// and values in its own buffers and scribbles over them after each call),
// that values it returns stay the caller's (it watches the last few for
// changes), and that Scan honours n and a false return from fn.
type checker struct {
	c          indexes.Client
	rep        *reporter
	who        string
	ks, vs     int
	kbuf, vbuf []byte
	kept       [4]keptValue
	next       int // kept slot for the next value
}

// keptValue is a value Search returned and a copy taken at the time.
type keptValue struct{ got, want []byte }

func newChecker(c indexes.Client, rep *reporter, who string, ks, vs int) *checker {
	return &checker{c: c, rep: rep, who: who, ks: ks, vs: vs, kbuf: make([]byte, ks), vbuf: make([]byte, vs)}
}

func (c *checker) key(k []byte) []byte {
	copy(c.kbuf, k)
	return c.kbuf
}

func (c *checker) val(v []byte) []byte {
	copy(c.vbuf, v)
	return c.vbuf
}

// after scribbles over the buffers the index was handed and checks that
// the values it returned earlier are intact.
func (c *checker) after() {
	for i := range c.kbuf {
		c.kbuf[i] = 0xa5
	}
	for i := range c.vbuf {
		c.vbuf[i] = 0x5a
	}
	for i := range c.kept {
		k := &c.kept[i]
		if k.got != nil && !bytes.Equal(k.got, k.want) {
			c.rep.Errorf("%s: a value Search returned changed from %x to %x after the call: the index reused a slice it handed to the caller", c.who, k.want, k.got)
			*k = keptValue{}
		}
	}
}

func (c *checker) search(k []byte) ([]byte, bool, error) {
	v, found, err := c.c.Search(c.key(k))
	c.after()
	if err == nil && found {
		if len(v) != c.vs {
			c.rep.Errorf("%s: search %x returned a %d-byte value, want %d bytes", c.who, k, len(v), c.vs)
		}
		c.kept[c.next] = keptValue{got: v, want: bytes.Clone(v)}
		c.next = (c.next + 1) % len(c.kept)
	}
	return v, found, err
}

func (c *checker) write(kind opKind, k, v []byte) error {
	var err error
	switch kind {
	case opInsert:
		err = c.c.Insert(c.key(k), c.val(v))
	case opUpdate:
		err = c.c.Update(c.key(k), c.val(v))
	case opDelete:
		err = c.c.Delete(c.key(k))
	default:
		panic("indextest: write of a " + kind.String())
	}
	c.after()
	return err
}

// scan scans n entries from start, making fn return false after stop
// entries when stop > 0, and returns copies of the entries.
func (c *checker) scan(start []byte, n, stop int) ([]kv, error) {
	var (
		out     []kv
		stopped bool
		extra   int
	)
	err := c.c.Scan(c.key(start), n, func(k, v []byte) bool {
		if stopped {
			extra++
			return false
		}
		if len(k) != c.ks || len(v) != c.vs {
			c.rep.Errorf("%s: scan from %x passed a %d-byte key and a %d-byte value, want %d and %d bytes", c.who, start, len(k), len(v), c.ks, c.vs)
		}
		out = append(out, kv{key: bytes.Clone(k), val: bytes.Clone(v)})
		stopped = stop > 0 && len(out) >= stop
		return !stopped
	})
	c.after()
	if extra > 0 {
		c.rep.Errorf("%s: scan from %x called fn %d more times after it returned false", c.who, start, extra)
	}
	if len(out) > n {
		c.rep.Errorf("%s: scan from %x with n = %d passed %d entries", c.who, start, n, len(out))
	}
	return out, err
}

// step is one operation of a plan with the result the model expects.
type step struct {
	kind opKind
	key  []byte // scan: the start key
	// val is the value written (insert, update) or expected (search:
	// nil when the key must be absent).
	val []byte
	err error // writes: the error expected, nil or indexes.ErrNotFound
	// n and stop are a scan's limit and the entry count after which fn
	// returns false (0: never); want its expected entries.
	n, stop int
	want    []kv
}

func (s *step) String() string {
	switch s.kind {
	case opScan:
		if s.stop > 0 {
			return fmt.Sprintf("scan from %x, n = %d, stopping after %d", s.key, s.n, s.stop)
		}
		return fmt.Sprintf("scan from %x, n = %d", s.key, s.n)
	case opSearch, opDelete:
		return fmt.Sprintf("%s %x", s.kind, s.key)
	}
	return fmt.Sprintf("%s %x = %x", s.kind, s.key, s.val)
}

// do runs s and reports any difference from its expected result.
func (c *checker) do(s *step) {
	switch s.kind {
	case opSearch:
		v, found, err := c.search(s.key)
		switch {
		case err != nil:
			c.rep.Errorf("%s: %v: %v", c.who, s, err)
		case found && s.val == nil:
			c.rep.Errorf("%s: %v: found %x, want absent", c.who, s, v)
		case !found && s.val != nil:
			c.rep.Errorf("%s: %v: absent, want %x", c.who, s, s.val)
		case found && !bytes.Equal(v, s.val):
			c.rep.Errorf("%s: %v: found %x, want %x", c.who, s, v, s.val)
		}
	case opInsert, opUpdate, opDelete:
		if err := c.write(s.kind, s.key, s.val); !sameError(err, s.err) {
			c.rep.Errorf("%s: %v: error %v, want %v", c.who, s, err, s.err)
		}
	case opScan:
		got, err := c.scan(s.key, s.n, s.stop)
		if err != nil {
			c.rep.Errorf("%s: %v: %v", c.who, s, err)
			return
		}
		if d := diffEntries(got, s.want); d != "" {
			c.rep.Errorf("%s: %v: %s", c.who, s, d)
		}
	}
}

// sameError reports whether got is want: nil for nil, errors.Is otherwise.
func sameError(got, want error) bool {
	if want == nil {
		return got == nil
	}
	return errors.Is(got, want)
}

// diffEntries describes the first difference between a scan's entries and
// the expected ones, "" when there is none.
func diffEntries(got, want []kv) string {
	for i := range min(len(got), len(want)) {
		if !bytes.Equal(got[i].key, want[i].key) || !bytes.Equal(got[i].val, want[i].val) {
			return fmt.Sprintf("entry %d of %d is %v, want %v", i, len(got), got[i], want[i])
		}
	}
	switch {
	case len(got) < len(want):
		return fmt.Sprintf("%d entries, want %d: the first missing is %v", len(got), len(want), want[len(got)])
	case len(got) > len(want):
		return fmt.Sprintf("%d entries, want %d: the first extra is %v", len(got), len(want), got[len(want)])
	}
	return ""
}
