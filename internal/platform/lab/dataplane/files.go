package dataplane

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// writeProxy writes a proxy's directory: the root, its certificates and
// its bootstrap. The directory and files belong to the proxy's user (a
// sidecar's 1337 must read its key and create its admin socket). It
// returns the SHA-256 of the bootstrap, recorded for provenance.
func writeProxy(p *proxy, ca *CA) (string, error) {
	// Parents stay traversable for the sidecar's user; the proxy's own
	// directory is private to it.
	if err := os.MkdirAll(filepath.Dir(p.Dir), 0o755); err != nil {
		return "", fmt.Errorf("proxy %s: %w", p.Name, err)
	}
	if err := os.Mkdir(p.Dir, 0o750); err != nil && !os.IsExist(err) {
		return "", fmt.Errorf("proxy %s: %w", p.Name, err)
	}
	files := map[string][]byte{p.path(rootFile): ca.RootPEM()}
	for _, c := range p.Certs {
		certPEM, keyPEM, err := ca.Issue(c.Identity, c.Key)
		if err != nil {
			return "", fmt.Errorf("proxy %s: %w", p.Name, err)
		}
		files[c.CertPath], files[c.KeyPath] = certPEM, keyPEM
	}
	boot, err := json.MarshalIndent(p.Boot, "", " ")
	if err != nil {
		return "", fmt.Errorf("proxy %s: encode bootstrap: %w", p.Name, err)
	}
	files[p.path(configFile)] = boot
	for path, b := range files {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return "", fmt.Errorf("proxy %s: %w", p.Name, err)
		}
		if err := os.Chown(path, p.UID, p.UID); err != nil {
			return "", fmt.Errorf("proxy %s: %w", p.Name, err)
		}
	}
	if err := os.Chown(p.Dir, p.UID, p.UID); err != nil {
		return "", fmt.Errorf("proxy %s: %w", p.Name, err)
	}
	sum := sha256.Sum256(boot)
	return hex.EncodeToString(sum[:]), nil
}

// ClosedAbove returns the first directory above path, from the nearest,
// that other users cannot traverse, or "" when every one can: a process
// the lab runs as another user (a proxy's 1337, an app's 65532) must get
// through each to reach its files.
func ClosedAbove(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err == nil && st.Mode().Perm()&0o001 == 0 {
			return d, nil
		}
		if d == "/" {
			return "", nil
		}
	}
}
