// Package rendezvous is how the compute-node processes of one run find
// each other: the first memory node (dmbench memnode --rendezvous) or any
// host serves it over HTTP, and every process joins, takes a position
// (its compute node), and meets the others at named exchanges, each a
// barrier at which every position hands in a payload and gets all of
// them back: server addresses before the fabric connects, nothing at the
// phase barriers, partial results at the end. The artifacts do the same
// through memcached (serverNum, clientNum and their barrier keys,
// FACTS-cluster.md).
//
// A run is named by a digest of its configuration, so processes started
// with different configurations never meet; every request carries an
// HMAC of the digest under the cluster key. A process that fails aborts
// the run, and every exchange of it then fails naming the position and
// the reason, so no process waits for one that is gone.
package rendezvous

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// request is the body of every call.
type request struct {
	Run      string `json:"run"` // configuration digest
	Proof    string `json:"proof"`
	Parties  int    `json:"parties"`
	Position int    `json:"position"`
	Name     string `json:"name,omitempty"`
	Payload  []byte `json:"payload,omitempty"`
	Reason   string `json:"reason,omitempty"`
	WaitMs   int64  `json:"wait_ms"` // how long an exchange may wait
}

// reply is the body of every answer.
type reply struct {
	Position int      `json:"position"`
	Payloads [][]byte `json:"payloads,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// Server serves rendezvous for any number of runs, one after another or
// at once. Build it with NewServer.
type Server struct {
	key []byte
	srv *http.Server
	ln  net.Listener

	mu   sync.Mutex
	runs map[string]*run
}

// run is one run's meeting state.
type run struct {
	parties int
	joined  int
	aborted error
	changed chan struct{} // closed and replaced on every change
	ex      map[string]*exchange
	// finished is set once every position reached the last exchange
	// (Done): from then on a process may go without failing the run.
	finished bool
}

// exchange is one named barrier.
type exchange struct {
	payloads [][]byte
	arrived  []bool
	count    int
	taken    int // positions that have read the result
}

// NewServer starts a rendezvous on addr ("host:0" picks a port) for
// processes holding key.
func NewServer(addr string, key []byte) (*Server, error) {
	if len(key) == 0 {
		return nil, errors.New("rendezvous: an empty cluster key")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("rendezvous: listen on %s: %w", addr, err)
	}
	s := &Server{key: key, ln: ln, runs: map[string]*run{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /join", s.handle(s.join))
	mux.HandleFunc("POST /exchange", s.handle(s.exchange))
	mux.HandleFunc("POST /abort", s.handle(s.abort))
	mux.HandleFunc("POST /presence", s.handle(s.presence))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server; exchanges in progress fail.
func (s *Server) Close() error { return s.srv.Close() }

func proof(key []byte, run string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(run))
	return hex.EncodeToString(m.Sum(nil))
}

// handle decodes a request, checks its proof and answers with fn's reply.
func (s *Server) handle(fn func(ctx context.Context, q *request) (reply, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var q request
		var rep reply
		err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&q)
		switch {
		case err != nil:
			err = fmt.Errorf("malformed request: %w", err)
		case !hmac.Equal([]byte(q.Proof), []byte(proof(s.key, q.Run))):
			err = errors.New("the cluster key does not match the rendezvous's")
		case q.Parties < 1:
			err = fmt.Errorf("a run of %d compute nodes", q.Parties)
		default:
			rep, err = fn(r.Context(), &q)
		}
		if err != nil {
			rep = reply{Error: err.Error()}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(rep)
	}
}

// runOf returns the state of q's run, making it on first use. s.mu held.
func (s *Server) runOf(q *request) (*run, error) {
	r := s.runs[q.Run]
	if r == nil {
		r = &run{parties: q.Parties, changed: make(chan struct{}), ex: map[string]*exchange{}}
		s.runs[q.Run] = r
	}
	if r.parties != q.Parties {
		return nil, fmt.Errorf("a run of %d compute nodes joined one of %d with the same configuration digest", q.Parties, r.parties)
	}
	return r, nil
}

func (r *run) signal() {
	close(r.changed)
	r.changed = make(chan struct{})
}

func (s *Server) join(_ context.Context, q *request) (reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runOf(q)
	if err != nil {
		return reply{}, err
	}
	if r.aborted != nil && r.joined == r.parties {
		// Every process of the aborted run had joined: this is a new run
		// of the same configuration (a sweep resumed).
		r = &run{parties: q.Parties, changed: make(chan struct{}), ex: map[string]*exchange{}}
		s.runs[q.Run] = r
	}
	if r.aborted != nil {
		return reply{}, r.aborted
	}
	if r.joined == r.parties {
		return reply{}, fmt.Errorf("all %d compute nodes of this run have joined already: is a process of an earlier run still running, or was --compute-nodes too small?", r.parties)
	}
	r.joined++
	return reply{Position: r.joined - 1}, nil
}

func (s *Server) exchange(ctx context.Context, q *request) (reply, error) {
	s.mu.Lock()
	r, err := s.runOf(q)
	if err == nil && (q.Position < 0 || q.Position >= r.parties) {
		err = fmt.Errorf("position %d of a run of %d compute nodes", q.Position, r.parties)
	}
	if err != nil {
		s.mu.Unlock()
		return reply{}, err
	}
	e := r.ex[q.Name]
	if e == nil {
		e = &exchange{payloads: make([][]byte, r.parties), arrived: make([]bool, r.parties)}
		r.ex[q.Name] = e
	}
	if e.arrived[q.Position] {
		s.mu.Unlock()
		return reply{}, fmt.Errorf("compute node %d reached exchange %q twice", q.Position, q.Name)
	}
	e.arrived[q.Position] = true
	e.payloads[q.Position] = q.Payload
	e.count++
	if q.Name == Done && e.count == r.parties {
		r.finished = true
	}
	r.signal()
	timer := time.NewTimer(time.Duration(q.WaitMs) * time.Millisecond)
	defer timer.Stop()
	for e.count < r.parties && r.aborted == nil {
		ch := r.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return reply{}, ctx.Err()
		case <-timer.C:
			s.mu.Lock()
			var missing []int
			for i, ok := range e.arrived {
				if !ok {
					missing = append(missing, i)
				}
			}
			s.mu.Unlock()
			return reply{}, fmt.Errorf("compute nodes %v did not reach exchange %q within %v (did their processes fail or not start?)", missing, q.Name, time.Duration(q.WaitMs)*time.Millisecond)
		}
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	if r.aborted != nil {
		return reply{}, r.aborted
	}
	rep := reply{Position: q.Position, Payloads: e.payloads}
	if e.taken++; e.taken == r.parties && q.Name == Done {
		delete(s.runs, q.Run) // the run is over: the digest may run again
	}
	return rep, nil
}

// presence is held open by every process for as long as it takes part in
// the run: when its connection closes before the run finished (the
// process was killed, its host lost), the run is aborted naming it, so
// that the others stop waiting for it at once rather than at a timeout.
func (s *Server) presence(ctx context.Context, q *request) (reply, error) {
	s.mu.Lock()
	r, err := s.runOf(q)
	s.mu.Unlock()
	if err != nil {
		return reply{}, err
	}
	for {
		s.mu.Lock()
		if r.finished || r.aborted != nil {
			err := r.aborted
			s.mu.Unlock()
			return reply{}, err // the others learn of an abort here at once
		}
		ch := r.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			s.mu.Lock()
			if !r.finished && r.aborted == nil {
				r.aborted = fmt.Errorf("compute node %d's process is gone: its connection to the rendezvous closed before the run finished", q.Position)
				r.signal()
			}
			s.mu.Unlock()
			return reply{}, nil
		}
	}
}

func (s *Server) abort(_ context.Context, q *request) (reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.runOf(q)
	if err != nil {
		return reply{}, err
	}
	if r.aborted == nil {
		r.aborted = fmt.Errorf("compute node %d failed: %s", q.Position, q.Reason)
		r.signal()
	}
	return reply{}, nil
}

// Done is the name of a run's last exchange, after which the rendezvous
// forgets the run.
const Done = "done"

// Client is one process's handle on a run's rendezvous.
type Client struct {
	url      string
	key      []byte
	run      string
	parties  int
	position int
	wait     time.Duration
	http     *http.Client
	leave    context.CancelFunc
	aborted  chan error
}

// Join joins the run named by digest (a digest of its configuration) of
// parties compute nodes at the rendezvous at addr and returns a client
// whose Position is this process's compute node (0 to parties-1, in the
// order the processes joined). timeout bounds every later exchange.
func Join(addr string, key []byte, digest string, parties int, timeout time.Duration) (*Client, error) {
	c := &Client{url: "http://" + addr, key: key, run: digest, parties: parties, wait: timeout, aborted: make(chan error, 1),
		http: &http.Client{Timeout: timeout + 10*time.Second}}
	rep, err := c.call("join", request{})
	if err != nil {
		return nil, fmt.Errorf("%w (is a rendezvous serving there: dmbench memnode --rendezvous %s?)", err, addr)
	}
	c.position = rep.Position
	ctx, cancel := context.WithCancel(context.Background())
	c.leave = cancel
	go c.stay(ctx)
	return c, nil
}

// stay holds the presence request open until the run finishes or Leave;
// when the run is aborted meanwhile, it hands the reason to Aborted.
func (c *Client) stay(ctx context.Context) {
	req, err := c.request(ctx, "presence", request{})
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return // Leave, or the rendezvous is gone: exchanges will say so
	}
	defer resp.Body.Close()
	var rep reply
	if json.NewDecoder(resp.Body).Decode(&rep) == nil && rep.Error != "" {
		c.aborted <- fmt.Errorf("rendezvous at %s: %s", c.url, rep.Error)
	}
}

// Aborted delivers the reason when another process aborts the run or
// vanishes, while this one takes part in it: a process busy with its
// clients, far from the next exchange, stops them on it.
func (c *Client) Aborted() <-chan error { return c.aborted }

// Leave ends this process's presence: call it when the run is over for
// it, after its last exchange or after Abort.
func (c *Client) Leave() { c.leave() }

// Position is this process's position: which compute node it runs.
func (c *Client) Position() int { return c.position }

// Exchange hands in payload at the exchange called name and returns
// every position's payload once all have arrived.
func (c *Client) Exchange(name string, payload []byte) ([][]byte, error) {
	rep, err := c.call("exchange", request{Name: name, Payload: payload})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(rep.Payloads) != c.parties {
		return nil, fmt.Errorf("rendezvous: exchange %s returned %d payloads for %d compute nodes", name, len(rep.Payloads), c.parties)
	}
	return rep.Payloads, nil
}

// Abort tells every other process of the run that this one failed, and
// why; their exchanges fail naming this position.
func (c *Client) Abort(reason error) error {
	_, err := c.call("abort", request{Reason: reason.Error()})
	return err
}

// request is the POST of q to path, filled in with this process's run,
// proof, position and wait.
func (c *Client) request(ctx context.Context, path string, q request) (*http.Request, error) {
	q.Run, q.Proof, q.Parties, q.Position, q.WaitMs = c.run, proof(c.key, c.run), c.parties, c.position, c.wait.Milliseconds()
	body, err := json.Marshal(q)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/"+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

func (c *Client) call(path string, q request) (reply, error) {
	req, err := c.request(context.Background(), path, q)
	if err != nil {
		return reply{}, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("rendezvous at %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	var rep reply
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		return reply{}, fmt.Errorf("rendezvous at %s: %s: %w", c.url, resp.Status, err)
	}
	if rep.Error != "" {
		return reply{}, fmt.Errorf("rendezvous at %s: %s", c.url, rep.Error)
	}
	return rep, nil
}
