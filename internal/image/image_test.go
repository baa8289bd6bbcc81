package image

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// staticBinary builds a small static Linux program, as meshbench's
// release build is.
func staticBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", "bin", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return filepath.Join(dir, "bin")
}

// checkImage checks that img runs binary as meshbench's image does.
func checkImage(t *testing.T, img v1.Image, binary string) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != "linux" || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != Path || cf.Config.User != User {
		t.Errorf("config: os %s, entrypoint %v, user %q; want linux, [%s], %s", cf.OS, cf.Config.Entrypoint, cf.Config.User, Path, User)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	h, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(tr)
	want, _ := os.ReadFile(binary)
	if h.Name != "meshbench" || h.Mode&0o111 == 0 || !bytes.Equal(got, want) {
		t.Errorf("layer holds %s (mode %o, %d bytes), want the executable binary (%d bytes) at %s", h.Name, h.Mode, len(got), len(want), Path)
	}
}

func TestTarballLoads(t *testing.T) {
	bin := staticBinary(t)
	img, err := Build(bin)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Build(bin)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("one binary built two digests: %s, %s", d1, d2)
	}
	path := filepath.Join(t.TempDir(), "meshbench.tar")
	if err := WriteTarball(path, "registry.example/meshbench:dev", img); err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag("registry.example/meshbench:dev")
	loaded, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatal(err)
	}
	c1, _ := img.ConfigName()
	if c, _ := loaded.ConfigName(); c != c1 {
		t.Errorf("the tarball's image has config %s, want %s", c, c1)
	}
	checkImage(t, loaded, bin)
}

func TestPushToRegistry(t *testing.T) {
	bin := staticBinary(t)
	img, err := Build(bin)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ref, err := Push(host+"/you/meshbench:v0", img)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := name.NewDigest(ref)
	pulled, err := remote.Image(d)
	if err != nil {
		t.Fatal(err)
	}
	checkImage(t, pulled, bin)
}

func TestBuildRefusesDynamicBinary(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "script")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(notELF); err == nil || !strings.Contains(err.Error(), "not a Linux executable") {
		t.Errorf("Build of a script: %v", err)
	}
	if _, err := Build("/bin/sh"); err == nil || !strings.Contains(err.Error(), "CGO_ENABLED=0") {
		t.Errorf("Build of a dynamically linked /bin/sh: %v, want a refusal saying how to build static", err)
	}
}

// TestTarballRefusesPlantedLink plants, where a tarball's temporary file
// used to be made (PATH.tmp), a link to a file another user owns and a
// root run must not write: the tarball is written beside it, whole, and
// the link's target is unchanged.
func TestTarballRefusesPlantedLink(t *testing.T) {
	img, err := Build(staticBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "meshbench.tar")
	if err := os.Symlink(victim, path+".tmp"); err != nil {
		t.Fatal(err)
	}
	if err := WriteTarball(path, "registry.example/meshbench:dev", img); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("the link's target now holds %d bytes, want it unchanged", len(b))
	}
	tag, _ := name.NewTag("registry.example/meshbench:dev")
	if _, err := tarball.ImageFromPath(path, &tag); err != nil {
		t.Fatalf("the tarball: %v", err)
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o044 != 0o044 {
		t.Fatalf("the tarball is %v (%v), want a regular file others can read, as os.Create made it", st.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("the directory holds %d entries, want the tarball and the planted link only", len(entries))
	}
}

// elfHeader is a static Linux executable's ELF header alone, no program
// headers, for machine: what Build reads the architecture from.
func elfHeader(t *testing.T, class elf.Class, order binary.ByteOrder, machine elf.Machine) string {
	t.Helper()
	var b bytes.Buffer
	data := elf.ELFDATA2LSB
	if order == binary.BigEndian {
		data = elf.ELFDATA2MSB
	}
	b.Write([]byte{0x7f, 'E', 'L', 'F', byte(class), byte(data), byte(elf.EV_CURRENT)})
	b.Write(make([]byte, elf.EI_NIDENT-b.Len()))
	w := func(v any) { _ = binary.Write(&b, order, v) }
	w(uint16(elf.ET_EXEC))
	w(uint16(machine))
	w(uint32(elf.EV_CURRENT))
	if class == elf.ELFCLASS64 {
		w(uint64(0)) // entry
		w(uint64(0)) // program headers
		w(uint64(0)) // section headers
		w(uint32(0)) // flags
		w(uint16(64))
		w(uint16(56))
		w(uint16(0))
		w(uint16(64))
	} else {
		w(uint32(0))
		w(uint32(0))
		w(uint32(0))
		w(uint32(0))
		w(uint16(52))
		w(uint16(32))
		w(uint16(0))
		w(uint16(40))
	}
	w(uint16(0)) // section headers
	w(uint16(0)) // their names' section
	p := filepath.Join(t.TempDir(), "meshbench")
	if err := os.WriteFile(p, b.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// The image's architecture is the packed binary's, not the machine's that
// runs image push (issue 44): an arm64 binary packed on amd64 makes an
// arm64 image, and a binary Go does not build for is refused.
func TestBuildTakesTheBinarysArchitecture(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		class   elf.Class
		order   binary.ByteOrder
		machine elf.Machine
		want    string
	}{
		{elf.ELFCLASS64, binary.LittleEndian, elf.EM_X86_64, "amd64"},
		{elf.ELFCLASS64, binary.LittleEndian, elf.EM_AARCH64, "arm64"},
		{elf.ELFCLASS32, binary.LittleEndian, elf.EM_386, "386"},
		{elf.ELFCLASS32, binary.LittleEndian, elf.EM_ARM, "arm"},
		{elf.ELFCLASS64, binary.LittleEndian, elf.EM_PPC64, "ppc64le"},
		{elf.ELFCLASS64, binary.BigEndian, elf.EM_S390, "s390x"},
		{elf.ELFCLASS64, binary.LittleEndian, elf.EM_RISCV, "riscv64"},
	} {
		img, err := Build(elfHeader(t, tc.class, tc.order, tc.machine))
		if err != nil {
			t.Errorf("%v: %v", tc.machine, err)
			continue
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS != "linux" || cf.Architecture != tc.want {
			t.Errorf("%v binary: image for %s/%s, want linux/%s", tc.machine, cf.OS, cf.Architecture, tc.want)
		}
	}
	_, err := Build(elfHeader(t, elf.ELFCLASS32, binary.BigEndian, elf.EM_68K))
	if err == nil || !strings.Contains(err.Error(), "EM_68K") {
		t.Errorf("an m68k binary: %v, want it refused, naming its machine", err)
	}
}
