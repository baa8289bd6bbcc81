package hostsafe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Executable checks that path is safe for root to run, as sudo checks
// the files it trusts: the file and every directory on the way to it,
// through every symbolic link, are owned by root or by the user meshbench
// runs as, and writable by neither group nor others, so that nobody else
// could have placed the file or could swap it, or a link to it, between
// the check and the run. A directory others may write passes only when it
// is root's and sticky, as /tmp is: there nobody else can rename or
// remove what they do not own. It returns the path with every link
// resolved, which is what the caller runs.
func Executable(path string) (string, error) {
	real, fi, err := walk(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", real)
	}
	return real, nil
}

// Dir checks, as Executable does, that no user but root (or the user
// meshbench runs as) can change what dir holds, or where its path leads.
func Dir(dir string) error {
	_, fi, err := walk(dir)
	if err == nil && !fi.IsDir() {
		err = fmt.Errorf("%s is not a directory", dir)
	}
	return err
}

// maxLinks bounds the links walk follows, as the kernel's ELOOP does.
const maxLinks = 40

// walk resolves path one component at a time from /, checking each
// directory it passes through, each link it follows and the file it ends
// at with owned; it returns the resolved path and the file's information.
func walk(path string) (string, os.FileInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, err
	}
	root, err := os.Lstat("/")
	if err != nil {
		return "", nil, err
	}
	if err := owned("/", root); err != nil {
		return "", nil, err
	}
	done, todo, links := "/", strings.Split(strings.TrimPrefix(abs, "/"), "/"), 0
	fi := root
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, c)
		if fi, err = os.Lstat(next); err != nil {
			return "", nil, err
		}
		if err := owned(next, fi); err != nil {
			return "", nil, err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			done = next
			continue
		}
		if links++; links > maxLinks {
			return "", nil, fmt.Errorf("%s: too many links", path)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", nil, err
		}
		if filepath.IsAbs(target) {
			done = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
		if fi, err = os.Lstat(done); err != nil {
			return "", nil, err
		}
	}
	return done, fi, nil
}

// UntrustedError refuses a file or directory another user could change.
type UntrustedError struct {
	Path   string
	Reason string
}

func (e *UntrustedError) Error() string {
	return e.Path + " is " + e.Reason + ": another user could replace what meshbench would run as root"
}

// Fix says how to make a refused file trusted.
const Fix = "make the file and every directory above it root's and not writable by group or others (chown root; chmod go-w)"

// owned refuses a file or directory another user owns or may write.
func owned(path string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: no owner", path)
	}
	euid := uint32(os.Geteuid())
	if st.Uid != 0 && st.Uid != euid {
		return &UntrustedError{Path: path, Reason: fmt.Sprintf("owned by uid %d, not root", st.Uid)}
	}
	m := fi.Mode()
	if m.Perm()&0o022 == 0 || m&os.ModeSymlink != 0 { // a link's own mode means nothing
		return nil
	}
	if m.IsDir() && m&os.ModeSticky != 0 && st.Uid == 0 {
		return nil // /tmp: others may add names, never replace root's
	}
	return &UntrustedError{Path: path, Reason: fmt.Sprintf("writable by group or others (mode %s)", m)}
}
