package image

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// Path is where the binary lives in the image, its entrypoint.
	Path = "/meshbench"
	// User is distroless's nonroot user, which the pods' security
	// context names too.
	User = "65532:65532"
)

// Build returns meshbench's image: one layer holding the binary at Path,
// run as User, for the binary's own architecture (read from its ELF
// header, so that a binary built for arm64 packed on amd64 makes an
// arm64 image). The binary must be static, for the image has no libc.
func Build(binary string) (v1.Image, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("read the binary: %w", err)
	}
	arch, err := inspect(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", binary, err)
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar(data))), nil
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Config.Entrypoint = []string{Path}
	cf.Config.User = User
	return mutate.ConfigFile(img, cf)
}

// layerTar is the layer: the binary, owned by root, executable by all.
// Its time is fixed, so that one binary always makes one digest.
func layerTar(binary []byte) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	_ = tw.WriteHeader(&tar.Header{Name: Path[1:], Mode: 0o755, Size: int64(len(binary)), Typeflag: tar.TypeReg,
		ModTime: time.Unix(0, 0), Format: tar.FormatPAX})
	_, _ = tw.Write(binary)
	_ = tw.Close()
	return b.Bytes()
}

// inspect returns a static Linux binary's architecture, as Go (and an
// image's config) names it, and refuses a dynamically linked one.
func inspect(data []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("not a Linux executable (%v): build meshbench for linux", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", errors.New("dynamically linked: the image has no libc; build it static with CGO_ENABLED=0 go build ./cmd/meshbench")
		}
	}
	arch, ok := goArch[elfArch{f.Machine, f.Class, f.Data}]
	if !ok {
		return "", fmt.Errorf("built for %v (%v, %v), which meshbench's image is not made for: build it with GOARCH amd64, arm64, 386, arm, ppc64le, s390x or riscv64", f.Machine, f.Class, f.Data)
	}
	return arch, nil
}

// elfArch is what an ELF header says of the machine a binary runs on.
type elfArch struct {
	machine elf.Machine
	class   elf.Class
	data    elf.Data
}

// goArch names the ELF machines Go builds Linux binaries for as GOARCH
// does.
var goArch = map[elfArch]string{
	{elf.EM_X86_64, elf.ELFCLASS64, elf.ELFDATA2LSB}:  "amd64",
	{elf.EM_AARCH64, elf.ELFCLASS64, elf.ELFDATA2LSB}: "arm64",
	{elf.EM_386, elf.ELFCLASS32, elf.ELFDATA2LSB}:     "386",
	{elf.EM_ARM, elf.ELFCLASS32, elf.ELFDATA2LSB}:     "arm",
	{elf.EM_PPC64, elf.ELFCLASS64, elf.ELFDATA2LSB}:   "ppc64le",
	{elf.EM_S390, elf.ELFCLASS64, elf.ELFDATA2MSB}:    "s390x",
	{elf.EM_RISCV, elf.ELFCLASS64, elf.ELFDATA2LSB}:   "riscv64",
}

// Push writes img to ref's registry with the credentials docker login or
// a credential helper keeps, and returns the image's reference by digest.
func Push(ref string, img v1.Image, opts ...remote.Option) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %w", ref, err)
	}
	opts = append([]remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	if err := remote.Write(r, img, opts...); err != nil {
		return "", fmt.Errorf("push %s: %w", r, err)
	}
	return digestRef(r, img)
}

// WriteTarball writes img as a tarball tagged ref, which docker load,
// kind load image-archive and ctr images import read. The tarball's
// manifest is Docker's, so the image's digest is the registry's to give
// when it is pushed from there; its config and layer are img's.
func WriteTarball(path, ref string, img v1.Image) error {
	r, err := name.ParseReference(ref)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	// The temporary file gets a fresh name, created O_EXCL in the
	// target's directory: a predictable name there could be a link
	// another user planted, which a root run would write through.
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name()) // fails harmlessly after the rename
	err = tarball.Write(r, img, f)
	if err == nil {
		// CreateTemp's 0600 would hide the tarball from the docker or
		// kind that loads it; os.Create's 0644 is what a user expects.
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// rename replaces a link at path, never writing through it.
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func digestRef(r name.Reference, img v1.Image) (string, error) {
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return r.Context().Digest(d.String()).String(), nil
}
