package cluster

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestStealUnderLoad loads CPU 0 for a moment: the steal read is a share
// of the CPU's time, and the load lasts the span asked for.
func TestStealUnderLoad(t *testing.T) {
	start := time.Now()
	steal, err := stealUnderLoad(context.Background(), []int{0}, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 200*time.Millisecond || took > 5*time.Second {
		t.Errorf("the load lasted %v, want about 200ms", took)
	}
	if steal < 0 || steal > 1 {
		t.Errorf("steal %g of the CPU's time, want a share between 0 and 1", steal)
	}
	if _, err := stealUnderLoad(context.Background(), []int{1 << 20}, time.Millisecond); err == nil {
		t.Error("loading a CPU that does not exist: no error")
	}
}

func TestStudyCPUs(t *testing.T) {
	got, err := studyCPUs([]string{"1", "0-1"})
	if err != nil || len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Errorf("studyCPUs(1, 0-1) = %v, %v; want [0 1]", got, err)
	}
	all, err := allowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := studyCPUs([]string{"0", ""}); err != nil || len(got) != len(all) {
		t.Errorf("a floating node: %v, %v; want every CPU this process may use, %v", got, err, all)
	}
	if _, err := studyCPUs([]string{"x"}); err == nil {
		t.Error("a bad CPU list: no error")
	}
}

// TestContentionFinding checks the finding's shape: advisory, with the
// steal read in its detail, whatever this host's hypervisor does now.
func TestContentionFinding(t *testing.T) {
	f := ContentionFinding(context.Background(), []string{"0"}, false)
	if !f.Advisory || f.Check != "contention" || !strings.Contains(f.Detail, "the hypervisor took") {
		t.Errorf("finding %+v: want an advisory contention check naming the steal", f)
	}
	if !f.OK && f.Fix == "" {
		t.Errorf("a failed check without a fix: %+v", f)
	}
	if f := ContentionFinding(context.Background(), []string{"0"}, true); !f.OK {
		t.Errorf("shared host: %+v, want OK", f)
	}
}
