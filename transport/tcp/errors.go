package tcp

import (
	"errors"
	"fmt"

	"github.com/dmbench/dmbench/transport"
)

// Error-frame flags: what of the server-side error survives the wire, so
// that errors.As and errors.Is see through a remote failure as they would
// through a local one.
const (
	errHasAddr     = 1 << iota // an *transport.AddrError follows
	errOutOfMemory             // the error wraps transport.ErrOutOfMemory
	errRejected                // refused before any handler ran (no handler)
)

// errNoHandler is a call of a method no handler serves: the call is
// rejected, and counts nothing, as on the other fabrics.
var errNoHandler = errors.New("no handler registered")

// RemoteError is an error a node's server sent back: the text of the
// server-side error, unwrapping to the *transport.AddrError and
// transport.ErrOutOfMemory it carried.
type RemoteError struct {
	Msg  string
	Addr *transport.AddrError
	OOM  bool
	// Rejected: the server refused the request before running anything.
	Rejected bool
}

func (e *RemoteError) Error() string { return e.Msg }

// Unwrap lets errors.As find the AddrError and errors.Is the
// ErrOutOfMemory behind the message.
func (e *RemoteError) Unwrap() []error {
	var errs []error
	if e.Addr != nil {
		errs = append(errs, e.Addr)
	}
	if e.OOM {
		errs = append(errs, transport.ErrOutOfMemory)
	}
	return errs
}

// appendError encodes err as the error frame answering request id.
func appendError(b []byte, id uint64, err error) []byte {
	b, s := beginFrame(b, frameError, id)
	var flags byte
	var ae *transport.AddrError
	if errors.As(err, &ae) {
		flags |= errHasAddr
	}
	if errors.Is(err, transport.ErrOutOfMemory) {
		flags |= errOutOfMemory
	}
	if errors.Is(err, errNoHandler) {
		flags |= errRejected
	}
	b = append(b, flags)
	if ae != nil {
		b = append(b, byte(ae.Verb))
		b = appendU64(b, uint64(ae.Addr))
		b = appendU64(b, ae.Len)
		b = appendStr(b, truncate(ae.Reason))
		b = appendBool(b, ae.Region != nil)
		if ae.Region != nil {
			b = appendRegion(b, *ae.Region)
		}
	}
	b = appendStr(b, truncate(err.Error()))
	return endFrame(b, s)
}

// decodeError rebuilds the error an error frame carries. A frame that
// carries a bare AddrError (a verb's own check failed) gives that
// AddrError itself, as a local fabric would return it.
func decodeError(p []byte) (error, error) {
	r := reader{b: p}
	flags := r.u8()
	var ae *transport.AddrError
	if flags&errHasAddr != 0 {
		ae = &transport.AddrError{Verb: transport.VerbKind(r.u8()), Addr: transport.GAddr(r.u64()), Len: r.u64(), Reason: r.str()}
		if r.bool() {
			rg := r.region(ae.Addr.Node())
			ae.Region = &rg
		}
	}
	msg := r.str()
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("error frame: %w", err)
	}
	if ae != nil && flags&(errOutOfMemory|errRejected) == 0 && msg == ae.Error() {
		return ae, nil
	}
	return &RemoteError{Msg: msg, Addr: ae, OOM: flags&errOutOfMemory != 0, Rejected: flags&errRejected != 0}, nil
}

// truncate keeps an error text within what a frame carries.
func truncate(s string) string {
	if len(s) > maxName {
		return s[:maxName]
	}
	return s
}
