package indexes

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/dmbench/dmbench/transport"
)

// Spec registers an index: its name, the paper it comes from, its
// parameters and how to build it.
type Spec struct {
	Name  string
	Paper string
	// Summary is one line for `dmbench list`.
	Summary string
	Params  []Param
	// PaperMode, when not empty, says why the index relies on 64-byte
	// cacheline atomicity (transport.ModePaper) for correctness; the
	// conformance suite then reports it rather than failing it under
	// transport.ModeStrict. It may depend on parameters.
	PaperMode func(p Params) string
	// Steps names the steps the index labels its operations with
	// (transport.Endpoint.SetStep): Steps[i] is step i+1, reported in a
	// run's time breakdown. Step 0 is the unlabelled rest, "other".
	Steps []string
	// Repartitions says the index implements Repartitioner.
	Repartitions bool
	// Partitioned, when set and true for the parameters, says the
	// configuration needs Env.Partitions and is correct only while each
	// key is written by clients of the compute node whose partition holds
	// it (P-Sherman, P-SMART: DEX's benchmark keeps every compute node to
	// its own key range). The conformance suite then hands each key's
	// writes to its owner; reads still come from every compute node.
	Partitioned func(p Params) bool
	// Oracle, when not empty, says why the index cannot run with its
	// compute nodes in separate processes: it is a bound whose definition
	// is state that every compute node sees at no cost (the ideal index's
	// directory). Attaching to it fails with this reason, and the
	// conformance suite's Split case skips it.
	Oracle string
	// Offload, for an index whose memory nodes run handlers (DEX's
	// pushdown, dLSM's near-data compaction), makes them from what every
	// process knows, the shape and the parameters, so that a memory node
	// in a process of its own runs them: the compute node that builds the
	// index installs them there (Installer). The index's New registers the
	// same handlers with Handle where the nodes run in its process.
	Offload func(s Shape, p Params) (map[uint16]transport.Handler, error)
	New     func(env Env, p Params) (Index, error)
}

var (
	regMu    sync.Mutex
	registry = map[string]Spec{}
)

// Register adds an index; index packages call it from init. It panics on a
// duplicate name, a programming error.
func Register(s Spec) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[s.Name]; dup {
		panic("indexes: duplicate registration of " + s.Name)
	}
	registry[s.Name] = s
}

// Lookup returns the named index's spec.
func Lookup(name string) (Spec, error) {
	regMu.Lock()
	s, ok := registry[name]
	regMu.Unlock()
	if !ok {
		return Spec{}, fmt.Errorf("index %q is not one of: %s", name, strings.Join(Names(), ", "))
	}
	return s, nil
}

// Names lists the registered indexes, sorted.
func Names() []string {
	regMu.Lock()
	defer regMu.Unlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Specs lists the registered specs sorted by name.
func Specs() []Spec {
	var specs []Spec
	for _, n := range Names() {
		s, _ := Lookup(n)
		specs = append(specs, s)
	}
	return specs
}

// Build resolves raw parameters against the spec and builds the index,
// stamping its identity into the superblock; with env.Attach it checks
// that the superblock holds this index, published ready, and attaches.
func (s Spec) Build(env Env, raw map[string]string) (Index, error) {
	p, err := s.Resolve(raw)
	if err != nil {
		return nil, err
	}
	ep := env.Fabric.Setup(env.Fabric.Config().ComputeNodeIDs()[0])
	if env.Attach {
		if s.Oracle != "" {
			return nil, fmt.Errorf("%s cannot attach from another compute node: %s", s.Name, s.Oracle)
		}
		if err := check(ep, env.Fabric, s.Name, p, env); err != nil {
			return nil, err
		}
	}
	idx, err := s.New(env, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	if !env.Attach {
		if err := s.install(env, p); err != nil {
			return nil, err
		}
		if err := stamp(ep, env.Fabric, s.Name, p, env); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return idx, nil
}
