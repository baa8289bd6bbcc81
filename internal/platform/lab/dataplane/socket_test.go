package dataplane

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/meshbench/meshbench/internal/testenv"
)

// dialAs connects to a Unix socket as uid and gid, from a thread of its
// own whose credentials only that thread carries (setresuid(2) through a
// raw syscall changes the calling thread alone); the thread is never
// unlocked, so it exits with the goroutine and no other code runs on it.
func dialAs(t *testing.T, uid, gid int, path string) (net.Conn, error) {
	t.Helper()
	type res struct {
		c   net.Conn
		err error
	}
	done := make(chan res, 1)
	go func() {
		runtime.LockOSThread()
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, ^uintptr(0), uintptr(gid), ^uintptr(0)); e != 0 {
			done <- res{err: e}
			return
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, ^uintptr(0), uintptr(uid), ^uintptr(0)); e != 0 {
			done <- res{err: e}
			return
		}
		c, err := net.Dial("unix", path)
		done <- res{c, err}
	}()
	r := <-done
	return r.c, r.err
}

// greeting is what the test server writes on every connection it serves.
const greeting = "served"

// served reports whether a connection gets the server's greeting.
func served(c net.Conn) bool {
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	b := make([]byte, len(greeting))
	_, err := io.ReadFull(c, b)
	return err == nil && string(b) == greeting
}

// SDS hands a proxy's private key to whoever names its node id, so the
// control plane's sockets serve the proxies' user only: the socket is
// theirs, mode 0600; root and another user (the apps' 65532 here) are
// refused, the proxies' 1337 is served.
func TestIntegrationSocketsServeTheProxiesOnly(t *testing.T) {
	testenv.Integration(t)
	testenv.NeedRoot(t)
	dir, err := os.MkdirTemp("", "mb-sock-") // not t.TempDir's: other users must reach it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sds.sock")
	if err := serveSocket(path, func(l net.Listener) error {
		for {
			c, err := l.Accept()
			if err != nil {
				return err
			}
			_, _ = c.Write([]byte(greeting))
			go func() { _, _ = io.Copy(io.Discard, c); c.Close() }()
		}
	}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if owner := st.Sys().(*syscall.Stat_t); st.Mode().Perm() != 0o600 || owner.Uid != ProxyUID || owner.Gid != ProxyUID {
		t.Errorf("%s: mode %s, owner %d:%d; want 0600, the proxies' %d:%d", path, st.Mode(), owner.Uid, owner.Gid, ProxyUID, ProxyUID)
	}
	// Root, which the file's mode does not keep out, is closed on too.
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("root could not connect: %v", err)
	}
	if served(c) {
		t.Errorf("root was served on the control plane's socket %s", path)
	}
	c.Close()
	c, err = dialAs(t, 65532, 65532, path)
	if err == nil {
		defer c.Close()
		if served(c) {
			t.Errorf("uid 65532 was served on the control plane's socket %s", path)
		}
	}
	c, err = dialAs(t, ProxyUID, ProxyUID, path)
	if err != nil {
		t.Fatalf("the proxies' user could not connect: %v", err)
	}
	defer c.Close()
	if !served(c) {
		t.Error("the proxies' user was not served")
	}
}
