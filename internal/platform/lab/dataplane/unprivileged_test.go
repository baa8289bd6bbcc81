package dataplane

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/meshbench/meshbench/internal/testenv"
)

// A setuid or setgid proxy binary is refused; a plain one passes. (File
// capabilities need root to set: TestIntegrationCheckUnprivilegedFileCaps.)
func TestCheckUnprivileged(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "envoy")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := CheckUnprivileged(bin); err != nil {
		t.Fatalf("a plain binary: %v", err)
	}
	for _, mode := range []os.FileMode{0o755 | os.ModeSetuid, 0o755 | os.ModeSetgid} {
		if err := os.Chmod(bin, mode); err != nil {
			t.Fatal(err)
		}
		if err := CheckUnprivileged(bin); err == nil || !strings.Contains(err.Error(), "setuid or setgid") {
			t.Errorf("mode %s: %v", mode, err)
		}
	}
}

// A proxy binary with file capabilities (as setcap cap_net_admin+ep
// leaves it) is refused.
func TestIntegrationCheckUnprivilegedFileCaps(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	bin := filepath.Join(t.TempDir(), "envoy")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// struct vfs_cap_data, revision 2, effective: CAP_NET_ADMIN (12)
	// permitted.
	capData := make([]byte, 20)
	binary.LittleEndian.PutUint32(capData[0:], 0x02000000|0x000001)
	binary.LittleEndian.PutUint32(capData[4:], 1<<12)
	if err := unix.Setxattr(bin, "security.capability", capData, 0); err != nil {
		t.Fatal(err)
	}
	if err := CheckUnprivileged(bin); err == nil || !strings.Contains(err.Error(), "file capabilities") {
		t.Errorf("a binary with file capabilities: %v", err)
	}
}
