// Package twitterfixture writes synthetic request logs in the format of
// the Twitter cache traces (twitter/cache-trace, Yang et al., OSDI 2020):
// one request per line, "timestamp,anonymized key,key size,value size,
// client id,operation,TTL". They are not real data: keys are drawn from a
// Zipfian over a fixed key population with a seeded generator, and the
// operation mix, skew and sizes follow the published statistics of the
// cluster a profile is named after (stat/2020Mar.md of the trace
// repository). They exist so that dmbench's trace reader and the Figure 9
// pipeline can be tested and run without the multi-gigabyte traces.
package twitterfixture

import (
	"bufio"
	"fmt"
	"io"
	"math/rand"
	"sort"
	"strconv"
)

// Profile is the shape of a synthetic trace.
type Profile struct {
	Name      string
	Ops       map[string]float64 // operation -> share of the requests
	Alpha     float64            // Zipf skew of key popularity (> 1)
	KeyBytes  int                // anonymized key length
	ValueMean int                // mean value size in bytes
	Keys      uint64             // key population
	Clients   int                // distinct client ids
	TTL       int                // seconds, on writes
}

// Profiles are the clusters Dolphin's Figure 9 replays, from the trace
// repository's statistics (cluster8: key 23 B, value 9497 B, set 0.50 /
// get 0.50, Zipf alpha 1.74; cluster9: key 32 B, value 39 B, get 0.99,
// alpha 1.68), and "mixed", which issues every operation of the format
// for tests.
var Profiles = map[string]Profile{
	"cluster8": {Name: "cluster8", Ops: map[string]float64{"get": 0.5, "set": 0.5},
		Alpha: 1.74, KeyBytes: 23, ValueMean: 9497, Keys: 1 << 20, Clients: 40, TTL: 86400},
	"cluster9": {Name: "cluster9", Ops: map[string]float64{"get": 0.99, "set": 0.01},
		Alpha: 1.68, KeyBytes: 32, ValueMean: 39, Keys: 1 << 20, Clients: 40, TTL: 86400},
	"mixed": {Name: "mixed", Ops: map[string]float64{
		"get": 0.40, "gets": 0.05, "set": 0.15, "add": 0.05, "replace": 0.05, "cas": 0.05,
		"append": 0.03, "prepend": 0.02, "incr": 0.05, "decr": 0.03, "delete": 0.12},
		Alpha: 1.2, KeyBytes: 20, ValueMean: 100, Keys: 1 << 12, Clients: 8, TTL: 3600},
}

// alphabet spells the anonymized part of a key.
const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Write writes lines requests of profile p, drawn with seed, to w. The
// same profile, lines and seed give the same bytes.
func Write(w io.Writer, p Profile, lines int, seed int64) error {
	r := rand.New(rand.NewSource(seed))
	zipf := rand.NewZipf(r, p.Alpha, 1, p.Keys-1)
	names := make([]string, 0, len(p.Ops))
	for op := range p.Ops {
		names = append(names, op)
	}
	sort.Strings(names) // map order must not decide the draws
	bw := bufio.NewWriter(w)
	buf := make([]byte, 0, 128)
	for i := range lines {
		op := pick(r, p.Ops, names)
		id := zipf.Uint64()
		key := keyName(p, id)
		value, ttl := 0, 0
		switch op {
		case "get", "gets":
			value = size(r, p.ValueMean)
		case "delete":
		default:
			value, ttl = size(r, p.ValueMean), p.TTL
		}
		buf = buf[:0]
		buf = strconv.AppendInt(buf, int64(i/1000), 10) // 1,000 requests a second
		buf = append(buf, ',')
		buf = append(buf, key...)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(len(key)), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(value), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(1+r.Intn(p.Clients)), 10)
		buf = append(buf, ',')
		buf = append(buf, op...)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(ttl), 10)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return fmt.Errorf("twitterfixture: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("twitterfixture: %w", err)
	}
	return nil
}

// pick draws an operation by its share.
func pick(r *rand.Rand, ops map[string]float64, names []string) string {
	u, total := r.Float64(), 0.0
	for _, op := range names {
		total += ops[op]
		if u < total {
			return op
		}
	}
	return names[len(names)-1]
}

// keyName is key id's anonymized name: a namespace, as the real traces
// keep theirs, then the eleven base-62 digits of id times an odd constant
// (distinct ids, distinct names), then filler up to the profile's length.
func keyName(p Profile, id uint64) string {
	const namespace = "ns:k:"
	n := max(p.KeyBytes, len(namespace)+11)
	b := make([]byte, 0, n)
	b = append(b, namespace...)
	x := id * 0x9e3779b97f4a7c15
	for range 11 {
		b = append(b, alphabet[x%62])
		x /= 62
	}
	for y := id; len(b) < n; {
		y = y*0x5851f42d4c957f2d + 0x14057b7ef767814f
		b = append(b, alphabet[(y>>58)%62])
	}
	return string(b)
}

// size draws a value size around mean (uniform over [mean/2, 3*mean/2]).
func size(r *rand.Rand, mean int) int {
	return mean/2 + r.Intn(mean+1)
}
