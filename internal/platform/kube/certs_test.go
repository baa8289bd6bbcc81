package kube

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// testPKI writes the control plane's certificates and keys to dir: a CA,
// the API server's serving certificate, an admin client certificate and
// the service-account signing key.
type testPKI struct {
	CA, ServerCert, ServerKey, AdminCert, AdminKey, SAKey, SAPub string
	// NobodyCert and NobodyKey are a user no role is bound to.
	NobodyCert, NobodyKey string
	// RunnerCert and RunnerKey are the user `meshbench kubernetes rbac`'s
	// role is bound to, and nothing else.
	RunnerCert, RunnerKey string
	// SmallCert and SmallKey are the user a test binds to the namespaced
	// role `meshbench kubernetes rbac` prints for a study that installs
	// no charts (use_existing).
	SmallCert, SmallKey string
	// TenantCert and TenantKey are another team's user, who may write in
	// its own namespace only when a test grants it.
	TenantCert, TenantKey string
}

func writePKI(dir string) (testPKI, error) {
	pki := testPKI{
		CA: filepath.Join(dir, "ca.crt"), ServerCert: filepath.Join(dir, "apiserver.crt"), ServerKey: filepath.Join(dir, "apiserver.key"),
		AdminCert: filepath.Join(dir, "admin.crt"), AdminKey: filepath.Join(dir, "admin.key"),
		SAKey: filepath.Join(dir, "sa.key"), SAPub: filepath.Join(dir, "sa.pub"),
		NobodyCert: filepath.Join(dir, "nobody.crt"), NobodyKey: filepath.Join(dir, "nobody.key"),
		RunnerCert: filepath.Join(dir, "runner.crt"), RunnerKey: filepath.Join(dir, "runner.key"),
		SmallCert: filepath.Join(dir, "small.crt"), SmallKey: filepath.Join(dir, "small.key"),
		TenantCert: filepath.Join(dir, "tenant.crt"), TenantKey: filepath.Join(dir, "tenant.key"),
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return pki, err
	}
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "meshbench-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return pki, err
	}
	if err := writePEM(pki.CA, "CERTIFICATE", caDER); err != nil {
		return pki, err
	}
	leaf := func(serial int64, cn string, org []string, usage x509.ExtKeyUsage, ips []net.IP, dns []string, certPath, keyPath string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn, Organization: org},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
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
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}, pki.ServerCert, pki.ServerKey); err != nil {
		return pki, err
	}
	if err := leaf(3, "meshbench-admin", []string{"system:masters"}, x509.ExtKeyUsageClientAuth, nil, nil, pki.AdminCert, pki.AdminKey); err != nil {
		return pki, err
	}
	if err := leaf(4, "meshbench-nobody", nil, x509.ExtKeyUsageClientAuth, nil, nil, pki.NobodyCert, pki.NobodyKey); err != nil {
		return pki, err
	}
	if err := leaf(5, runnerUser, nil, x509.ExtKeyUsageClientAuth, nil, nil, pki.RunnerCert, pki.RunnerKey); err != nil {
		return pki, err
	}
	if err := leaf(6, smallUser, nil, x509.ExtKeyUsageClientAuth, nil, nil, pki.SmallCert, pki.SmallKey); err != nil {
		return pki, err
	}
	if err := leaf(7, tenantUser, nil, x509.ExtKeyUsageClientAuth, nil, nil, pki.TenantCert, pki.TenantKey); err != nil {
		return pki, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return pki, err
	}
	kd, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return pki, err
	}
	if err := writePEM(pki.SAKey, "EC PRIVATE KEY", kd); err != nil {
		return pki, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return pki, err
	}
	return pki, writePEM(pki.SAPub, "PUBLIC KEY", pub)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
