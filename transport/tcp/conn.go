package tcp

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// writer coalesces the frames of one connection: senders append encoded
// frames to a buffer and one goroutine writes everything appended since
// its last write in a single syscall, so many small verbs in flight share
// a write as a NIC's doorbells share a PCIe transaction.
type writer struct {
	c    net.Conn
	mu   sync.Mutex // guards buf, err
	room sync.Cond  // signalled when the loop takes buf
	buf  []byte
	err  error         // the write that failed; later appends fail with it
	wake chan struct{} // a permit: buf has frames
	stop chan struct{} // closed by finish
	done chan struct{} // closed when loop returns
	once sync.Once
}

// errWriterClosed fails sends after finish.
var errWriterClosed = errors.New("connection closed")

func newWriter(c net.Conn) *writer {
	w := &writer{c: c, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	w.room.L = &w.mu
	go w.loop()
	return w
}

// maxBuffered bounds the bytes waiting for the loop: a sender waits for
// room beyond it, so a peer that stops reading replies stalls its own
// requests instead of growing its server's memory.
const maxBuffered = 2 * MaxFrame

// send appends the frame encode builds to the buffer and wakes the loop.
func (w *writer) send(encode func([]byte) []byte) error {
	w.mu.Lock()
	for w.err == nil && len(w.buf) > maxBuffered {
		w.room.Wait()
	}
	if w.err != nil {
		w.mu.Unlock()
		return w.err
	}
	w.buf = encode(w.buf)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return nil
}

func (w *writer) loop() {
	defer close(w.done)
	var spare []byte
	for {
		select {
		case <-w.wake:
		case <-w.stop:
			return
		}
		w.mu.Lock()
		out := w.buf
		w.buf = spare[:0]
		w.room.Broadcast()
		w.mu.Unlock()
		if len(out) == 0 {
			spare = out
			continue
		}
		if _, err := w.c.Write(out); err != nil {
			w.mu.Lock()
			w.err = fmt.Errorf("write: %w", err)
			w.room.Broadcast()
			w.mu.Unlock()
			w.c.Close() // the reader sees it and fails what is pending
			return
		}
		spare = out
	}
}

// finish stops the loop and writes what is still buffered (a last error
// frame before a connection is cut), waiting at most a second for it.
func (w *writer) finish() {
	w.once.Do(func() {
		close(w.stop)
		<-w.done
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.err == nil && len(w.buf) > 0 {
			w.c.SetWriteDeadline(time.Now().Add(time.Second))
			w.c.Write(w.buf)
		}
		w.err, w.buf = errWriterClosed, nil
		w.room.Broadcast()
	})
}

// frameReader reads length-prefixed frames, reusing one body buffer: a
// body is valid until the next call.
type frameReader struct {
	r    *bufio.Reader
	body []byte
}

func newFrameReader(c net.Conn) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(c, 64<<10)}
}

// errTooLong is returned for a frame announcing more than MaxFrame.
type errTooLong uint32

func (e errTooLong) Error() string {
	return fmt.Sprintf("%v: frame of %d bytes exceeds the %d-byte limit", errFrame, uint32(e), MaxFrame)
}

func (e errTooLong) Unwrap() error { return errFrame }

// next reads one frame and splits its header off.
func (fr *frameReader) next() (typ byte, id uint64, payload []byte, err error) {
	var l [lenBytes]byte
	if _, err := io.ReadFull(fr.r, l[:]); err != nil {
		return 0, 0, nil, err
	}
	n := binary.LittleEndian.Uint32(l[:])
	if n > MaxFrame {
		return 0, 0, nil, errTooLong(n)
	}
	if cap(fr.body) < int(n) {
		fr.body = make([]byte, n)
	}
	fr.body = fr.body[:n]
	if _, err := io.ReadFull(fr.r, fr.body); err != nil {
		return 0, 0, nil, fmt.Errorf("frame of %d bytes cut short: %w", n, err)
	}
	return splitFrame(fr.body)
}
