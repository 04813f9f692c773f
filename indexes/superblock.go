package indexes

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dmbench/dmbench/transport"
)

// The superblock is what every compute node of a cluster agrees on before
// it touches an index: which index the memory nodes hold, and whether it
// is built. It lives in the last SuperblockBytes of the meta area of the
// first memory node's main region, which no index uses for its roots:
//
//	+0   magic "dmbench1"
//	+8   state: 0 empty, 1 claimed (a compute node is building and
//	     loading), 2 ready
//	+16  identity: SHA-256 of the index name, its effective parameters and
//	     the key and value sizes
//	+48  the index name, zero-padded (for error messages)
//
// The protocol is the artifacts' (FACTS-cluster.md): the first compute
// node to CAS the state from empty builds and loads the index, then
// publishes it ready; every other compute node waits for ready and then
// attaches (Env.Attach), learning everything from memory.
const (
	SuperblockBytes = 128
	sbMagic         = 0
	sbState         = 8
	sbIdentity      = 16
	sbName          = 48
	sbNameBytes     = SuperblockBytes - sbName
)

// Superblock states.
const (
	stateEmpty   = 0
	stateClaimed = 1
	stateReady   = 2
)

var magic = [8]byte{'d', 'm', 'b', 'e', 'n', 'c', 'h', '1'}

// superblock is the superblock's address on f.
func superblock(f transport.Fabric) (transport.GAddr, error) {
	n := f.Config().MemoryNodeIDs()[0]
	r, err := f.Region(n, "main")
	if err != nil {
		return 0, fmt.Errorf("indexes: superblock: %w", err)
	}
	return r.Base.Add(transport.MetaBytes - SuperblockBytes), nil
}

// identity is what a compute node attaching to an index must agree on
// with the one that built it.
func identity(name string, p Params, env Env) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00key %d value %d partitions %d", name, strings.Join(p.Sorted(), "\x00"), env.KeySize, env.ValueSize, len(env.Partitions))
	var id [32]byte
	h.Sum(id[:0])
	return id
}

// Claim tries to become the compute node that builds and loads the index:
// it CASes the superblock's state from empty to claimed through ep and
// reports whether it won. The winner builds with Env.Attach false, loads,
// and calls Publish; the others call AwaitReady and attach.
func Claim(ep transport.Endpoint, f transport.Fabric) (bool, error) {
	sb, err := superblock(f)
	if err != nil {
		return false, err
	}
	old, err := ep.CAS(sb.Add(sbState), stateEmpty, stateClaimed)
	if err != nil {
		return false, fmt.Errorf("indexes: claiming the superblock: %w", err)
	}
	return old == stateEmpty, nil
}

// Publish marks the index built and loaded, releasing the compute nodes
// waiting in AwaitReady.
func Publish(ep transport.Endpoint, f transport.Fabric) error {
	sb, err := superblock(f)
	if err != nil {
		return err
	}
	if err := ep.Write(sb.Add(sbState), binary.LittleEndian.AppendUint64(nil, stateReady)); err != nil {
		return fmt.Errorf("indexes: publishing the superblock: %w", err)
	}
	return nil
}

// ErrNoIndex is wrapped by AwaitReady and by an attaching Build when the
// memory nodes hold no built index.
var ErrNoIndex = errors.New("the memory nodes hold no built index")

// AwaitReady polls the superblock through ep, a real-time endpoint, until
// the index is published ready, for at most timeout; every poll is one
// counted READ.
func AwaitReady(ep transport.Endpoint, f transport.Fabric, timeout time.Duration) error {
	sb, err := superblock(f)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	var w [8]byte
	for {
		if err := ep.Read(w[:], sb.Add(sbState)); err != nil {
			return fmt.Errorf("indexes: reading the superblock: %w", err)
		}
		if binary.LittleEndian.Uint64(w[:]) == stateReady {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("indexes: %w after %v: the compute node that claimed it has not published it (did it fail?)", ErrNoIndex, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// stamp writes the built index's identity into the superblock.
func stamp(ep transport.Endpoint, f transport.Fabric, name string, p Params, env Env) error {
	sb, err := superblock(f)
	if err != nil {
		return err
	}
	id := identity(name, p, env)
	b := make([]byte, SuperblockBytes-sbIdentity)
	copy(b, id[:])
	copy(b[sbName-sbIdentity:], name[:min(len(name), sbNameBytes-1)])
	if err := ep.Write(sb.Add(sbMagic), magic[:]); err != nil {
		return fmt.Errorf("indexes: writing the superblock: %w", err)
	}
	if err := ep.Write(sb.Add(sbIdentity), b); err != nil {
		return fmt.Errorf("indexes: writing the superblock: %w", err)
	}
	return nil
}

// check verifies that the superblock holds a built index of this name,
// parameters and sizes: what attaching to it requires.
func check(ep transport.Endpoint, f transport.Fabric, name string, p Params, env Env) error {
	sb, err := superblock(f)
	if err != nil {
		return err
	}
	b := make([]byte, SuperblockBytes)
	if err := ep.Read(b, sb); err != nil {
		return fmt.Errorf("indexes: reading the superblock: %w", err)
	}
	if !bytes.Equal(b[sbMagic:sbMagic+8], magic[:]) {
		return fmt.Errorf("indexes: attaching to %s: %w (no superblock on memory node %d)", name, ErrNoIndex, f.Config().MemoryNodeIDs()[0])
	}
	if binary.LittleEndian.Uint64(b[sbState:]) != stateReady {
		return fmt.Errorf("indexes: attaching to %s: %w (it is claimed but not published ready)", name, ErrNoIndex)
	}
	id := identity(name, p, env)
	if !bytes.Equal(b[sbIdentity:sbIdentity+32], id[:]) {
		held := string(bytes.TrimRight(b[sbName:], "\x00"))
		if held != name {
			return fmt.Errorf("indexes: attaching to %s: the memory nodes hold index %s", name, held)
		}
		return fmt.Errorf("indexes: attaching to %s with %v, key size %d, value size %d: the memory nodes hold it with other parameters or sizes", name, p.Sorted(), env.KeySize, env.ValueSize)
	}
	return nil
}
