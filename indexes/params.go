package indexes

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Kind is the type of a parameter's value.
type Kind uint8

// The parameter kinds.
const (
	KindInt Kind = iota
	KindBool
	KindEnum
	KindFloat
)

// Param documents one parameter of an index.
type Param struct {
	Name    string
	Kind    Kind
	Default string
	// Values lists the accepted values of a KindEnum parameter, and the
	// words a KindInt or KindFloat parameter accepts besides numbers.
	Values []string
	// Min and Max bound a KindInt or KindFloat parameter when Max > Min.
	Min, Max float64
	Doc      string
}

// Params are resolved parameter values, every declared parameter present.
type Params map[string]string

func (p Param) accepted() string {
	if p.Kind != KindEnum && p.Kind != KindBool && len(p.Values) > 0 {
		q := p
		q.Values = nil
		return q.accepted() + ", or " + strings.Join(p.Values, ", ")
	}
	switch p.Kind {
	case KindBool:
		return "true or false"
	case KindEnum:
		return "one of " + strings.Join(p.Values, ", ")
	case KindInt:
		if p.Max > p.Min {
			return fmt.Sprintf("an integer from %g to %g", p.Min, p.Max)
		}
		return "an integer"
	default:
		if p.Max > p.Min {
			return fmt.Sprintf("a number from %g to %g", p.Min, p.Max)
		}
		return "a number"
	}
}

func (p Param) check(v string) error {
	ok := true
	switch p.Kind {
	case KindBool:
		_, err := strconv.ParseBool(v)
		ok = err == nil
	case KindEnum:
		ok = false
		for _, a := range p.Values {
			ok = ok || a == v
		}
	case KindInt, KindFloat:
		if slices.Contains(p.Values, v) {
			break
		}
		var x float64
		var err error
		if p.Kind == KindInt {
			var i int64
			i, err = strconv.ParseInt(v, 10, 64)
			x = float64(i)
		} else {
			x, err = strconv.ParseFloat(v, 64)
		}
		ok = err == nil && (p.Max <= p.Min || x >= p.Min && x <= p.Max)
	}
	if !ok {
		return fmt.Errorf("parameter %s = %q: want %s", p.Name, v, p.accepted())
	}
	return nil
}

// Resolve checks raw values against the declared parameters and fills in
// defaults. An unknown name or a bad value is an error naming it and what
// is accepted.
func (s Spec) Resolve(raw map[string]string) (Params, error) {
	byName := map[string]Param{}
	for _, p := range s.Params {
		byName[p.Name] = p
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := Params{}
	for _, k := range keys {
		p, ok := byName[k]
		if !ok {
			return nil, fmt.Errorf("index %s has no parameter %q (it has: %s)", s.Name, k, s.paramNames())
		}
		if err := p.check(raw[k]); err != nil {
			return nil, fmt.Errorf("index %s: %w", s.Name, err)
		}
		out[k] = raw[k]
	}
	for _, p := range s.Params {
		if _, set := out[p.Name]; !set {
			out[p.Name] = p.Default
		}
	}
	return out, nil
}

func (s Spec) paramNames() string {
	if len(s.Params) == 0 {
		return "none"
	}
	names := make([]string, len(s.Params))
	for i, p := range s.Params {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// Int returns an integer parameter; Resolve has validated it.
func (p Params) Int(name string) int {
	v, err := strconv.Atoi(p[name])
	if err != nil {
		panic(fmt.Sprintf("indexes: parameter %s = %q read as an integer: %v", name, p[name], err))
	}
	return v
}

// Bool returns a boolean parameter.
func (p Params) Bool(name string) bool {
	v, err := strconv.ParseBool(p[name])
	if err != nil {
		panic(fmt.Sprintf("indexes: parameter %s = %q read as a boolean: %v", name, p[name], err))
	}
	return v
}

// Float returns a numeric parameter.
func (p Params) Float(name string) float64 {
	v, err := strconv.ParseFloat(p[name], 64)
	if err != nil {
		panic(fmt.Sprintf("indexes: parameter %s = %q read as a number: %v", name, p[name], err))
	}
	return v
}

// String returns a parameter as written.
func (p Params) String(name string) string { return p[name] }

// Sorted lists the parameters as name=value, sorted, for reports.
func (p Params) Sorted() []string {
	out := make([]string, 0, len(p))
	for k, v := range p {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
