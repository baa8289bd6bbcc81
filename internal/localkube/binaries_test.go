package localkube

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fakeBinDir writes the control plane's binaries and a kwok stage file
// under dir, the binaries with mode.
func fakeBinDir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	for _, d := range []string{"bin", "stages"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kwok"} {
		p := filepath.Join(dir, "bin", b)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "stages", "pod-fast.yaml"), []byte("kind: Stage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The control plane runs as root's child from $MESHBENCH_K8S_BIN or the
// cache: a binary there that another user could have replaced is refused
// as missing ones are, before anything starts.
func TestCheckBinariesRefusesWhatOthersCanChange(t *testing.T) {
	t.Parallel()
	ok := t.TempDir()
	fakeBinDir(t, ok, 0o755)
	if err := CheckBinaries(ok); err != nil {
		t.Fatalf("binaries only root can change: %v", err)
	}
	for _, tc := range []struct {
		name   string
		mode   os.FileMode
		chmodD string // a directory made world-writable
	}{
		{name: "group-writable binaries", mode: 0o775},
		{name: "world-writable bin directory", mode: 0o755, chmodD: "bin"},
		{name: "world-writable cache directory", mode: 0o755, chmodD: "."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "k8s")
			fakeBinDir(t, dir, tc.mode)
			if tc.chmodD != "" {
				if err := os.Chmod(filepath.Join(dir, tc.chmodD), 0o777); err != nil {
					t.Fatal(err)
				}
			}
			err := CheckBinaries(dir)
			if err == nil || !strings.Contains(err.Error(), "writable by group or others") {
				t.Errorf("CheckBinaries: %v; want the binaries refused", err)
			}
		})
	}
}

// etcd's command line carries the quota it is given and the WAL count
// EtcdDiskBound assumes; no quota is DefaultEtcdQuota.
func TestEtcdArgsBoundTheDisk(t *testing.T) {
	t.Parallel()
	flag := func(args []string, name string) string {
		i := slices.Index(args, name)
		if i < 0 || i+1 >= len(args) {
			return ""
		}
		return args[i+1]
	}
	a := etcdArgs("/d", 128<<20)
	if flag(a, "--quota-backend-bytes") != "134217728" || flag(a, "--max-wals") != strconv.Itoa(etcdMaxWALs) || flag(a, "--data-dir") != "/d" {
		t.Errorf("etcd args %v", a)
	}
	if q := flag(etcdArgs("/d", 0), "--quota-backend-bytes"); q != strconv.Itoa(DefaultEtcdQuota) {
		t.Errorf("default quota %s", q)
	}
}
