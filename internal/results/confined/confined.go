package confined

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// LinkError refuses a path beneath a root that is a symbolic link, that
// leads out of the root, or that is not a plain file or directory.
type LinkError struct {
	Path   string
	Reason string
}

func (e *LinkError) Error() string {
	return e.Path + ": refused: " + e.Reason + " (meshbench writes inside a results directory only to plain files, and never through a link)"
}

// Mkdir creates name beneath root, and its parents, as MkdirAll does. No
// component beneath root may be a link; root itself is the caller's own
// path, created if missing, and links in it are followed (here and in
// every function of this package).
func Mkdir(root, name string) error {
	if err := step("mkdir " + name); err != nil {
		return err
	}
	d, err := openDir(root, name, true)
	if err != nil {
		return err
	}
	return d.Close()
}

// OpenFile opens the file name beneath root with flag (os.O_APPEND,
// os.O_TRUNC, os.O_CREATE... with os.O_WRONLY or os.O_RDWR) and perm,
// creating its parent directories. It refuses a link anywhere on the way,
// and a file that is not a regular file or that has other hard links (a
// hard link to a file outside the directory would be written through).
func OpenFile(root, name string, flag int, perm os.FileMode) (*os.File, error) {
	dir, base, err := split(name)
	if err != nil {
		return nil, err
	}
	if err := step("open " + name); err != nil {
		return nil, err
	}
	d, err := openDir(root, dir, true)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	path := filepath.Join(root, name)
	// O_NONBLOCK: opening a FIFO or a device planted there must not block
	// or act; it is refused below. O_TRUNC waits for the checks, as a hard
	// link's other name must not lose its contents either.
	fd, err := openat(int(d.Fd()), base, flag&^unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, uint32(perm.Perm()))
	if err != nil {
		return nil, pathError("open", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	if err := plainFile(f, path); err != nil {
		f.Close()
		return nil, err
	}
	if err := clearNonblock(fd); err != nil {
		f.Close()
		return nil, err
	}
	if flag&unix.O_TRUNC != 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// TooLargeError refuses a file beneath a root that is larger than what
// meshbench reads from a file of its kind: a results directory may come
// from someone else, and a sparse file of terabytes costs its maker
// nothing.
type TooLargeError struct {
	Path string
	// Size is the file's size, or -1 when it grew past Limit while it
	// was read.
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	size := fmt.Sprintf("%d bytes", e.Size)
	if e.Size < 0 {
		size = "it grew while read"
	}
	return fmt.Sprintf("%s: refused: %s, more than the %d bytes meshbench reads from such a file (a results directory may come from someone else)", e.Path, size, e.Limit)
}

// Open opens the regular file name beneath root for reading, refusing a
// link on the way and at name, and anything but a regular file (a FIFO
// would block, a device would act).
func Open(root, name string) (*os.File, error) {
	dir, base, err := split(name)
	if err != nil {
		return nil, err
	}
	d, err := openDir(root, dir, false)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	path := filepath.Join(root, name)
	fd, err := openat(int(d.Fd()), base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, pathError("open", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = &LinkError{Path: path, Reason: "not a regular file"}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads the file name beneath root, refusing a link, and a file
// of more than limit bytes before reading any of it.
func ReadFile(root, name string, limit int64) ([]byte, error) {
	f, err := Open(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, &TooLargeError{Path: f.Name(), Size: st.Size(), Limit: limit}
	}
	// The size was read before: a file that grows meanwhile is cut at
	// the limit and refused, not read to its end.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: f.Name(), Size: -1, Limit: limit}
	}
	return b, nil
}

// Dir is a directory beneath a root, handed to code that writes in it
// (a platform's logs of one measurement). Each of its writes walks from
// Root again, without following a link: a component of Name that was a
// directory when it was made and has since been swapped for a link is
// refused, as the rest of the path below Root is.
type Dir struct {
	// Root is the caller's own directory (a results directory), whose
	// path may hold links.
	Root string
	// Name is the directory's path beneath Root.
	Name string
}

// Path is the directory's path, for messages.
func (d Dir) Path() string { return filepath.Join(d.Root, d.Name) }

// IsZero reports whether d names no directory: nothing is to be written.
func (d Dir) IsZero() bool { return d.Root == "" }

// Mkdir creates the directory and its parents (see Mkdir).
func (d Dir) Mkdir() error { return Mkdir(d.Root, d.Name) }

// OpenFile opens the file name in the directory (see OpenFile).
func (d Dir) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return OpenFile(d.Root, filepath.Join(d.Name, name), flag, perm)
}

// WriteFile writes the file name in the directory atomically (see
// WriteFile).
func (d Dir) WriteFile(name string, data []byte) error {
	return WriteFile(d.Root, filepath.Join(d.Name, name), data)
}

// Hook, when set (by tests), is called before each step a write makes
// with the step's name ("mkdir NAME", "open NAME"; an atomic write's
// "create NAME", "sync NAME" of the file, "rename NAME" and "syncdir
// NAME" of its directory, in that order); an error it returns fails the
// write there, as a kill at that point would leave it.
var Hook func(step string) error

// WriteFile writes data to the file name beneath root atomically: to a
// temporary file in the same directory, synced, renamed over name, and
// the directory synced, so that neither a reader nor a crash ever sees a
// half-written file, or loses the rename. A link at name is replaced, not
// followed; a link on the way to it is refused.
func WriteFile(root, name string, data []byte) error {
	dir, base, err := split(name)
	if err != nil {
		return err
	}
	path := filepath.Join(root, name)
	if err := step("create " + name); err != nil {
		return err
	}
	d, err := openDir(root, dir, true)
	if err != nil {
		return err
	}
	defer d.Close()
	dfd := int(d.Fd())
	tmp, fd, err := createTemp(dfd, base)
	if err != nil {
		return pathError("create", path, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(root, dir, tmp))
	defer unix.Unlinkat(dfd, tmp, 0) // fails harmlessly after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	// The mode is set on the descriptor: umask does not narrow it.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := step("sync " + name); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := step("rename " + name); err != nil {
		return err
	}
	if err := unix.Renameat(dfd, tmp, dfd, base); err != nil {
		return pathError("rename", path, err)
	}
	if err := step("syncdir " + name); err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", filepath.Join(root, dir), err)
	}
	return nil
}

// TempPrefix starts the name of every temporary file WriteFile makes for
// the file name: "." + name + ".tmp-", then a random suffix.
func TempPrefix(name string) string { return "." + name + ".tmp-" }

// createTemp creates, O_EXCL in dirfd, a temporary file for the file
// base, under a name no one can predict: with a predictable one (the
// process ID and a count), whoever may write the directory could plant
// names ahead of the run and make every write of it fail.
func createTemp(dirfd int, base string) (string, int, error) {
	for try := 0; ; try++ {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return "", -1, err
		}
		tmp := TempPrefix(base) + hex.EncodeToString(r[:])
		fd, err := openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if errors.Is(err, unix.EEXIST) && try < 10 {
			continue
		}
		return tmp, fd, err
	}
}

func step(name string) error {
	if Hook == nil {
		return nil
	}
	return Hook(name)
}

// split checks that name is a local path (no "..", not absolute) and
// returns its directory and file name.
func split(name string) (dir, base string, err error) {
	if !filepath.IsLocal(name) || name == "." {
		return "", "", fmt.Errorf("%q: not a path inside the directory", name)
	}
	name = filepath.Clean(name)
	return filepath.Dir(name), filepath.Base(name), nil
}

// openDir opens root, then each component of name beneath it as a
// directory without following links, creating missing ones when create
// is set. root itself is the caller's own path, which may hold links.
func openDir(root, name string, create bool) (*os.File, error) {
	if create {
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, err
		}
	}
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	if name == "." || name == "" {
		return os.NewFile(uintptr(fd), root), nil
	}
	path := root
	for _, c := range strings.Split(filepath.Clean(name), string(filepath.Separator)) {
		path = filepath.Join(path, c)
		next, err := openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, c, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		unix.Close(fd)
		if err != nil {
			return nil, pathError("open", path, err)
		}
		fd = next
	}
	return os.NewFile(uintptr(fd), path), nil
}

// openat opens name, one component, relative to dirfd: with openat2
// confined beneath dirfd with no link resolved at all where the kernel
// has it (5.6 and later), and with O_NOFOLLOW on the single component
// otherwise, which is as strict for a name without a separator.
func openat(dirfd int, name string, flag int, perm uint32) (int, error) {
	how := unix.OpenHow{Flags: uint64(flag), Mode: uint64(perm),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	if flag&unix.O_CREAT == 0 && flag&unix.O_TMPFILE == 0 {
		how.Mode = 0
	}
	for try := 0; ; try++ {
		fd, err := openat2(dirfd, name, &how)
		switch {
		// EAGAIN: the kernel saw a rename race it could not rule out.
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN) && try < 100:
			continue
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			// No openat2: an old kernel, or a seccomp filter refusing it.
			return openatNoFollow(dirfd, name, flag, perm)
		}
		return fd, err
	}
}

// openat2 is unix.Openat2; a test replaces it to take the fallback.
var openat2 = unix.Openat2

func openatNoFollow(dirfd int, name string, flag int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flag|unix.O_NOFOLLOW, perm)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return fd, err
	}
}

// plainFile refuses an opened file that is not a regular file, or that
// has another hard link.
func plainFile(f *os.File, path string) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return &LinkError{Path: path, Reason: "not a regular file"}
	case st.Nlink > 1:
		return &LinkError{Path: path, Reason: fmt.Sprintf("a file with %d hard links", st.Nlink)}
	}
	return nil
}

func clearNonblock(fd int) error {
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, flags&^unix.O_NONBLOCK)
	return err
}

// pathError names a refused link plainly, and wraps other errors.
func pathError(op, path string, err error) error {
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
		if isLink(path) {
			return &LinkError{Path: path, Reason: "a symbolic link"}
		}
	case errors.Is(err, unix.EXDEV):
		return &LinkError{Path: path, Reason: "a link out of the directory"}
	case errors.Is(err, unix.ENXIO):
		return &LinkError{Path: path, Reason: "not a regular file"}
	}
	return &os.PathError{Op: op, Path: path, Err: err}
}

func isLink(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode()&fs.ModeSymlink != 0
}
