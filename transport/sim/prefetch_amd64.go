package sim

// prefetch starts loading the cache line at p without waiting for it.
//
//go:noescape
func prefetch(p *byte)
