// Package all registers every index of dmbench: import it for its side
// effect wherever indexes are chosen by name (the CLI, the go-ycsb binary,
// the figure catalog).
package all

import (
	_ "github.com/dmbench/dmbench/indexes/blink"   // FG-style B-link tree (SPREAD's baseline)
	_ "github.com/dmbench/dmbench/indexes/chime"   // CHIME (SOSP'24): hopscotch-hashed B+-tree leaves
	_ "github.com/dmbench/dmbench/indexes/dex"     // DEX (VLDB'24)
	_ "github.com/dmbench/dmbench/indexes/dlsm"    // dLSM (ICDE'23)
	_ "github.com/dmbench/dmbench/indexes/dmtree"  // DMTree (FAST'26)
	_ "github.com/dmbench/dmbench/indexes/dolphin" // Dolphin (MSST'24)
	_ "github.com/dmbench/dmbench/indexes/fpbtree" // FP-B+-tree (DMTree section 2.3)
	_ "github.com/dmbench/dmbench/indexes/ideal"   // the Expected bound
	_ "github.com/dmbench/dmbench/indexes/marlin"  // Marlin (ICPP'23)
	_ "github.com/dmbench/dmbench/indexes/rftree"  // RF-tree / SPREAD (Appl. Sci. 2023)
	_ "github.com/dmbench/dmbench/indexes/rolex"   // ROLEX (FAST'23)
	_ "github.com/dmbench/dmbench/indexes/sherman" // Sherman (SIGMOD'22)
	_ "github.com/dmbench/dmbench/indexes/smart"   // SMART (OSDI'23)
)
