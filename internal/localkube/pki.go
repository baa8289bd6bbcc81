package localkube

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the control plane's certificates and keys, as files: a CA, the
// API server's serving certificate, an admin client certificate
// (system:masters) and the service-account signing key.
type pki struct {
	CA, ServerCert, ServerKey, AdminCert, AdminKey, SAKey, SAPub string
}

func writePKI(dir string) (pki, error) {
	p := pki{
		CA: filepath.Join(dir, "ca.crt"), ServerCert: filepath.Join(dir, "apiserver.crt"), ServerKey: filepath.Join(dir, "apiserver.key"),
		AdminCert: filepath.Join(dir, "admin.crt"), AdminKey: filepath.Join(dir, "admin.key"),
		SAKey: filepath.Join(dir, "sa.key"), SAPub: filepath.Join(dir, "sa.pub"),
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "meshbench-localkube-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(7 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return p, err
	}
	if err := writePEM(p.CA, "CERTIFICATE", caDER); err != nil {
		return p, err
	}
	leaf := func(serial int64, cn string, org []string, usage x509.ExtKeyUsage, ips []net.IP, dns []string, certPath, keyPath string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn, Organization: org},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(7 * 24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: ips, DNSNames: dns,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		if err := writePEM(certPath, "CERTIFICATE", der); err != nil {
			return err
		}
		kd, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return err
		}
		return writePEM(keyPath, "EC PRIVATE KEY", kd)
	}
	if err := leaf(2, "kube-apiserver", nil, x509.ExtKeyUsageServerAuth,
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}, p.ServerCert, p.ServerKey); err != nil {
		return p, err
	}
	if err := leaf(3, "meshbench-admin", []string{"system:masters"}, x509.ExtKeyUsageClientAuth, nil, nil, p.AdminCert, p.AdminKey); err != nil {
		return p, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	kd, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return p, err
	}
	if err := writePEM(p.SAKey, "EC PRIVATE KEY", kd); err != nil {
		return p, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return p, err
	}
	return p, writePEM(p.SAPub, "PUBLIC KEY", pub)
}

func writePEM(path, typ string, der []byte) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeKubeconfig writes an admin kubeconfig for the local API server.
func writeKubeconfig(path string, p pki) error {
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: %q}
users:
- name: admin
  user: {client-certificate: %q, client-key: %q}
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
`, p.CA, p.AdminCert, p.AdminKey)
	return os.WriteFile(path, []byte(cfg), 0o600)
}
