package localkube

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestWritePKIKeepsTheCAKeyInMemory: the local control plane's CA signs
// its certificates in memory and its key is never written, so that a
// control plane killed outright leaves no key that could sign more. The
// files written hold the API server's, the admin's and the service
// accounts' keys alone, each 0600.
func TestWritePKIKeepsTheCAKeyInMemory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p, err := writePKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p.CA)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s holds no PEM", p.CA)
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	caPub, ok := ca.PublicKey.(*ecdsa.PublicKey)
	if !ok {
		t.Fatalf("the CA's key is a %T, not ECDSA", ca.PublicKey)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for rest := b; ; {
			var block *pem.Block
			if block, rest = pem.Decode(rest); block == nil {
				break
			}
			if block.Type != "EC PRIVATE KEY" {
				continue
			}
			key, err := x509.ParseECPrivateKey(block.Bytes)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if key.PublicKey.Equal(caPub) {
				t.Errorf("%s holds the CA's private key", path)
			}
			keys = append(keys, path)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v; want 0600", path, fi.Mode())
			}
		}
	}
	slices.Sort(keys)
	want := []string{p.AdminKey, p.ServerKey, p.SAKey}
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("private keys in %v, want in %v alone", keys, want)
	}
}
