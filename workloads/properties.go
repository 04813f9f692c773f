package workloads

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/magiconair/properties"
)

// Properties maps property names to raw values, as in a go-ycsb property
// file or its -p overrides.
type Properties map[string]string

// PropertyError is one bad property: unknown, malformed, or at odds with
// another.
type PropertyError struct {
	Source   string // the file (or override) that set it
	Property string // its name; several joined by "+" when a rule ties them
	Value    string // the raw value; empty for unknown properties
	Want     string // what is accepted
	Unknown  bool   // the name itself is not accepted
	Suggest  string // for an unknown name, the closest accepted one, if close
}

func (e *PropertyError) Error() string {
	if e.Unknown {
		hint := ""
		if e.Suggest != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", e.Suggest)
		}
		return fmt.Sprintf("%s: unknown property %q%s; want %s", e.Source, e.Property, hint, e.Want)
	}
	return fmt.Sprintf("%s: property %s=%q: want %s", e.Source, e.Property, e.Value, e.Want)
}

// Load reads the property file at path and applies overrides on top, as
// go-ycsb's -P and -p do.
func Load(path string, overrides Properties) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("workloads: %w", err)
	}
	defer f.Close()
	return Parse(path, f, overrides)
}

// Parse reads properties in Java .properties syntax (go-ycsb's reader,
// magiconair/properties, without ${...} expansion: a workload is data and
// should not depend on the environment) from r. source names the input in
// errors and gives the Spec its Name.
func Parse(source string, r io.Reader, overrides Properties) (*Spec, error) {
	buf, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("workloads: read %s: %w", source, err)
	}
	loader := properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	parsed, err := loader.LoadBytes(buf)
	if err != nil {
		return nil, fmt.Errorf("workloads: %s: %w", source, err)
	}
	file := make(Properties, parsed.Len())
	for _, k := range parsed.Keys() {
		file[k], _ = parsed.Get(k)
	}
	return FromProperties(source, file, overrides)
}

// FromProperties builds a Spec from a property map and overrides on top.
func FromProperties(source string, props, overrides Properties) (*Spec, error) {
	name := ""
	if source != "" {
		name = strings.TrimSuffix(filepath.Base(source), ".properties")
	}
	return build(name, source, props, overrides)
}

// ParseOverrides turns -p style "key=value" arguments into Properties.
func ParseOverrides(args []string) (Properties, error) {
	props := make(Properties, len(args))
	for _, arg := range args {
		k, v, ok := strings.Cut(arg, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("workloads: override %q: want key=value", arg)
		}
		props[k] = strings.TrimSpace(v)
	}
	return props, nil
}

// build applies props and then overrides to the defaults, checks the
// result, and reports every bad property at once, in name order.
func build(name, source string, props, overrides Properties) (*Spec, error) {
	s := defaultSpec()
	s.Name, s.Source = name, source
	merged := make(Properties, len(props)+len(overrides))
	origin := make(map[string]string, len(merged))
	for k, v := range props {
		merged[k], origin[k] = v, source
	}
	for k, v := range overrides {
		merged[k], origin[k] = v, fmt.Sprintf("%s (-p %s)", source, k)
	}
	var errs []*PropertyError
	for _, k := range slices.Sorted(maps.Keys(merged)) {
		v := strings.TrimSpace(merged[k])
		p, ok := propertyByName[k]
		if !ok {
			errs = append(errs, &PropertyError{Source: origin[k], Property: k, Want: acceptedNames,
				Unknown: true, Suggest: closestName(k)})
			continue
		}
		if !p.set(&s, v) {
			errs = append(errs, &PropertyError{Source: origin[k], Property: k, Value: v, Want: p.want})
		}
	}
	if len(errs) == 0 {
		errs = append(errs, s.crossCheck()...)
		errs = append(errs, checkInsertRange(&s, merged, origin)...)
	}
	if len(errs) > 0 {
		joined := make([]error, len(errs))
		for i, e := range errs {
			joined[i] = e
		}
		return nil, errors.Join(joined...)
	}
	return &s, nil
}

// closestName returns the accepted property name nearest to name, if it is
// within a typo's reach: at most one edit per four letters, and three.
func closestName(name string) string {
	best, bestDist := "", min(1+len(name)/4, 3)+1
	for _, p := range propertyTable {
		if d := editDistance(name, p.name); d < bestDist {
			best, bestDist = p.name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
