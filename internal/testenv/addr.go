package testenv

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// RefusedAddr returns a loopback TCP address that refuses connections for
// the rest of the test. A socket bound to it, never listening, holds its
// port: a port only taken and closed again can be handed at once to a
// listener of a test running in parallel, which then answers.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port)
}
