package cost

import (
	"os"
	"testing"
)

// TestCalibrateRows checks the calibration runs and covers every measured
// table entry; the numbers themselves are reported, never asserted.
func TestCalibrateRows(t *testing.T) {
	if testing.Short() || os.Getenv("DMBENCH_CALIBRATE") == "" {
		t.Skip("set DMBENCH_CALIBRATE=1 to run the calibration (about 10 s)")
	}
	for _, m := range Calibrate() {
		t.Logf("%-34s table %6.2f  measured %6.2f %s", m.Name, m.TableNs, m.Measured, m.Unit)
		if m.Measured <= 0 {
			t.Errorf("%s: measured %v", m.Name, m.Measured)
		}
	}
}
