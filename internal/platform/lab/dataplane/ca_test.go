package dataplane

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"testing"
)

func TestCAIssuesSPIFFECertificates(t *testing.T) {
	t.Parallel()
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		id   string
		kt   KeyType
		rsa  bool
	}{
		{name: "sidecar RSA", id: SPIFFEID("ns-1", "tier-1-app-a"), kt: RSA2048, rsa: true},
		{name: "ztunnel ECDSA", id: SPIFFEID("ns-2", "load-generator"), kt: ECDSAP256},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			certPEM, keyPEM, err := ca.Issue(tt.id, tt.kt)
			if err != nil {
				t.Fatal(err)
			}
			pair, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				t.Fatal(err)
			}
			block, _ := pem.Decode(certPEM)
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if got := peerIdentity(cert); got != tt.id {
				t.Errorf("identity %q, want %q", got, tt.id)
			}
			for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
				if _, err := cert.Verify(x509.VerifyOptions{Roots: pool(ca), KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
					t.Errorf("does not verify for %v: %v", usage, err)
				}
			}
			_, isRSA := pair.PrivateKey.(*rsa.PrivateKey)
			_, isEC := pair.PrivateKey.(*ecdsa.PrivateKey)
			if isRSA != tt.rsa || isEC == tt.rsa {
				t.Errorf("key %T", pair.PrivateKey)
			}
		})
	}
	other, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _, err := other.Issue(SPIFFEID("ns-1", "x"), ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(certPEM)
	cert, _ := x509.ParseCertificate(block.Bytes)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool(ca)}); err == nil {
		t.Error("a certificate of another CA verifies")
	}
	if _, _, err := ca.Issue("https://example.com/ns/a", RSA2048); err == nil {
		t.Error("issued for a non-SPIFFE name")
	}
}

// peerIdentity is the SPIFFE ID in a certificate's URI SANs.
func peerIdentity(cert *x509.Certificate) string {
	for _, u := range cert.URIs {
		if u.Scheme == "spiffe" {
			return u.String()
		}
	}
	return ""
}

// pool is the CA's root as a certificate pool.
func pool(ca *CA) *x509.CertPool {
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(ca.RootPEM())
	return p
}
