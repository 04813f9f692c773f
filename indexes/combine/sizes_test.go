package combine

import "testing"

func TestSizesSince(t *testing.T) {
	var before Sizes
	before.add(1)
	before.add(3)
	now := before.clone()
	now.add(3)
	now.add(5)
	d := now.Since(before)
	if d.Rounds() != 2 || d.Ops() != 8 || d.Max() != 5 || d.Quantile(0.5) != 3 || d.Mean() != 4 {
		t.Errorf("since: %d rounds, %d ops, max %d, p50 %d, mean %g; want 2, 8, 5, 3, 4", d.Rounds(), d.Ops(), d.Max(), d.Quantile(0.5), d.Mean())
	}
}
