package cluster

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The containers' open-file limit is a container runtime's, bounded by
// the kernel; only without CAP_SYS_RESOURCE is it this process's own
// hard limit, and the reason says so.
func TestFileLimit(t *testing.T) {
	t.Parallel()
	got, why, err := FileLimit()
	if err != nil {
		t.Fatal(err)
	}
	var cur unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &cur); err != nil {
		t.Fatal(err)
	}
	want := uint64(runtimeFileLimit)
	if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
			want = min(want, n)
		}
	}
	f := FileLimitFinding()
	if want > cur.Max && !canRaiseLimits() {
		if got != cur.Max || !strings.Contains(why, "CAP_SYS_RESOURCE") {
			t.Errorf("without CAP_SYS_RESOURCE: %d (%s), want the hard limit %d, said", got, why, cur.Max)
		}
		if f.OK || !f.Advisory || f.Fix == "" {
			t.Errorf("doctor's finding %+v, want an advisory warning with a fix", f)
		}
		return
	}
	if !f.OK {
		t.Errorf("doctor's finding %+v, want ok", f)
	}
	if got != want {
		t.Errorf("open-file limit %d (%s), want %d", got, why, want)
	}
}

func TestValidatePodSysctls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pod     PodSpec
		wantErr string
	}{
		{name: "net sysctls", pod: PodSpec{Namespace: "ns-1", Name: "load", Sysctls: map[string]string{"net.ipv4.ip_local_port_range": "16384 65535", "net.ipv4.tcp_tw_reuse": "1"}}},
		{name: "not under net", pod: PodSpec{Namespace: "ns-1", Name: "load", Sysctls: map[string]string{"kernel.shm_rmid_forced": "1"}}, wantErr: "net.*"},
		{name: "a path out of /proc/sys/net", pod: PodSpec{Namespace: "ns-1", Name: "load", Sysctls: map[string]string{"net.ipv4/../../kernel.x": "1"}}, wantErr: "net.*"},
		{name: "a line break", pod: PodSpec{Namespace: "ns-1", Name: "load", Sysctls: map[string]string{"net.ipv4.tcp_tw_reuse": "1\n2"}}, wantErr: "line break"},
		{name: "host network", pod: PodSpec{Namespace: "ns-1", Name: "out", HostNetwork: true, Sysctls: map[string]string{"net.ipv4.tcp_tw_reuse": "1"}}, wantErr: "host-network"},
	}
	for _, tt := range tests {
		err := validatePod(tt.pod)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.wantErr)
		}
	}
}
