package indexes

import (
	"errors"
	"fmt"
)

// WriteKind is what a Core's Put does with its key.
type WriteKind uint8

// The writes: Insert adds or replaces, Update replaces (ErrNotFound when
// absent), Delete removes (ErrNotFound when absent).
const (
	WriteInsert WriteKind = iota
	WriteUpdate
	WriteDelete
)

// Operation names, as Core.Begin receives them and errors name them.
const (
	OpSearch = "search"
	OpInsert = "insert"
	OpUpdate = "update"
	OpDelete = "delete"
	OpScan   = "scan"
)

// Core is a client's operations without what every client repeats around
// them; Checked adds that. Its methods run on one coroutine at a time.
type Core interface {
	// Begin starts operation op on key (its size already checked): the
	// index's own checks, such as a partition's owner, and per-operation
	// state.
	Begin(op string, key []byte) error
	// End finishes the operation whose error is err: it charges the
	// local work still pending and may replace a nil err with its own.
	End(err error) error
	Get(key []byte) (val []byte, found bool, err error)
	Put(key, val []byte, kind WriteKind) error
	Range(start []byte, n int, fn func(key, val []byte) bool) error
}

// Checked is the Client of core for index name: every key and value is
// checked against the index's sizes, Begin and End bracket every
// operation, and errors other than ErrNotFound are wrapped with the index,
// the operation and the key.
func Checked(name string, keySize, valueSize int, core Core) Client {
	return &checked{name: name, keySize: keySize, valueSize: valueSize, core: core}
}

type checked struct {
	name               string
	keySize, valueSize int
	core               Core
}

func (c *checked) begin(op string, key []byte) error {
	if len(key) != c.keySize {
		return fmt.Errorf("%s: %s: key of %d bytes, want %d", c.name, op, len(key), c.keySize)
	}
	return c.core.Begin(op, key)
}

func (c *checked) end(op string, key []byte, err error) error {
	err = c.core.End(err)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%s: %s %x: %w", c.name, op, key, err)
	}
	return err
}

func (c *checked) write(op string, key, val []byte, kind WriteKind) error {
	if err := c.begin(op, key); err != nil {
		return err
	}
	if kind != WriteDelete && len(val) != c.valueSize {
		return fmt.Errorf("%s: %s: value of %d bytes, want %d", c.name, op, len(val), c.valueSize)
	}
	return c.end(op, key, c.core.Put(key, val, kind))
}

func (c *checked) Search(key []byte) ([]byte, bool, error) {
	if err := c.begin(OpSearch, key); err != nil {
		return nil, false, err
	}
	val, found, err := c.core.Get(key)
	return val, found, c.end(OpSearch, key, err)
}

func (c *checked) Insert(key, val []byte) error { return c.write(OpInsert, key, val, WriteInsert) }
func (c *checked) Update(key, val []byte) error { return c.write(OpUpdate, key, val, WriteUpdate) }
func (c *checked) Delete(key []byte) error      { return c.write(OpDelete, key, nil, WriteDelete) }

func (c *checked) Scan(start []byte, n int, fn func(key, val []byte) bool) error {
	if err := c.begin(OpScan, start); err != nil {
		return err
	}
	return c.end(OpScan, start, c.core.Range(start, n, fn))
}

// CoreOf returns the Core a Checked client wraps, or nil for any other
// client: for an index's own tests, which reach into its client.
func CoreOf(c Client) Core {
	if ch, ok := c.(*checked); ok {
		return ch.core
	}
	return nil
}
