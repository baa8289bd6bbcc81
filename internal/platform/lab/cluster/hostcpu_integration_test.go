package cluster

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/resources"
	"github.com/meshbench/meshbench/internal/testenv"
)

// TestIntegrationHostNoise pins a busy loop outside the lab to the app
// node's CPU and one inside the lab to the same CPU: the outside one's CPU
// time must show up as host noise on that node, and the lab's own must
// not be counted there beyond what the rest of the host did.
func TestIntegrationHostNoise(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	_, err := exec.LookPath("taskset")
	testenv.Need(t, err == nil, "taskset (util-linux) pins the hog to a CPU: apt-get install util-linux")
	testenv.SkipUnderRace(t, "timing-sensitive: CPU time against tick accounting")
	l := newTestLab(t, NodeConfig{Name: "a", Role: "app", CPUs: "0"})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	spin := PodSpec{Namespace: "ns-1", Name: "spin", Node: "a", Containers: []ContainerSpec{{
		Name: "spin", Command: []string{helperBin(t)}, Env: []string{"MB_LAB_HELPER=spin"},
		Resources: resources.Requirements{CPULimitMilli: 300}}}}
	if err := l.CreatePods(ctx, []PodSpec{spin}); err != nil {
		t.Fatal(err)
	}
	m := l.StartHostMeter()
	// The hog: a bounded busy loop outside the lab, pinned to CPU 0.
	hog := exec.CommandContext(ctx, "taskset", "-c", "0", helperBin(t))
	hog.Env = append(hog.Environ(), "MB_LAB_HELPER=spin")
	if err := hog.Start(); err != nil {
		t.Fatalf("start the hog: %v", err)
	}
	time.Sleep(3 * time.Second)
	hogCPU := procCPU(t, hog.Process.Pid)
	_ = hog.Process.Kill()
	_ = hog.Wait()
	h, err := m.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Nodes) != 1 || h.Nodes[0].CPUs != 1 || h.CPUs < 1 {
		t.Fatalf("host CPU %+v", h)
	}
	secs := 3.0
	n := h.Nodes[0]
	// Tick accounting is exact to about a tick per CPU per second.
	if n.Outside < 0.8*hogCPU/secs {
		t.Errorf("outside the lab on CPU 0: %.2f cores, but the hog alone used %.2f", n.Outside, hogCPU/secs)
	}
	if n.Busy < n.Outside+0.1 {
		t.Errorf("CPU 0 busy %.2f cores, not above the outside %.2f plus the lab's busy loop", n.Busy, n.Outside)
	}
	if !(h.Noise() >= n.Outside*0.9) {
		t.Errorf("noise %.2f below the node's outside time %.2f", h.Noise(), n.Outside)
	}
}

// procCPU is a process's user and system time in seconds.
func procCPU(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := exec.Command("cat", "/proc/"+strconv.Itoa(pid)+"/stat").Output()
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / userHZ
}
