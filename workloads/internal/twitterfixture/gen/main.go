// Command gen writes synthetic Twitter-cache-trace files for dmbench's
// trace workloads (see package twitterfixture): by default
// cluster8.0.zst and cluster9.0.zst in -dir, the names
// `dmbench reproduce dolphin/fig9 --trace-dir DIR` looks for. The files
// are not the real traces.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/dmbench/dmbench/workloads/internal/twitterfixture"
)

func main() {
	dir := flag.String("dir", ".", "folder to write the files into")
	lines := flag.Int("lines", 1_000_000, "requests per file")
	seed := flag.Int64("seed", 1, "seed of the generator")
	profiles := flag.String("profiles", "cluster8,cluster9", "comma-separated profiles: cluster8, cluster9, mixed")
	plain := flag.Bool("plain", false, "write plain CSV (<profile>.0) instead of zstd (<profile>.0.zst)")
	flag.Parse()
	for _, name := range strings.Split(*profiles, ",") {
		if err := write(*dir, name, *lines, *seed, *plain); err != nil {
			fmt.Fprintln(os.Stderr, "gen-twitter-fixture:", err)
			os.Exit(1)
		}
	}
}

func write(dir, name string, lines int, seed int64, plain bool) error {
	p, ok := twitterfixture.Profiles[name]
	if !ok {
		return fmt.Errorf("no profile %q; want cluster8, cluster9 or mixed", name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, name+".0.zst")
	if plain {
		path = filepath.Join(dir, name+".0")
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var w io.Writer = f
	var enc *zstd.Encoder
	if !plain {
		if enc, err = zstd.NewWriter(f); err != nil {
			f.Close()
			return err
		}
		w = enc
	}
	if err := twitterfixture.Write(w, p, lines, seed); err != nil {
		f.Close()
		return err
	}
	if enc != nil {
		if err := enc.Close(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d synthetic requests of profile %s, seed %d (not real trace data)\n", path, lines, name, seed)
	return nil
}
