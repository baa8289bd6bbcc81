package dataplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/url"
	"time"
)

// KeyType is the key algorithm of a workload certificate. Istio's agent
// (sidecars, waypoints, gateways) asks for RSA 2048 by default; ztunnel
// asks for ECDSA P-256. The handshake cost differs, so each proxy gets
// the kind its real counterpart uses.
type KeyType int

// Key types.
const (
	RSA2048 KeyType = iota
	ECDSAP256
)

// CA issues workload certificates with SPIFFE URI SANs, as istiod's
// self-signed CA does.
type CA struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
}

// certTTL is Istio's default workload certificate lifetime.
const certTTL = 24 * time.Hour

// NewCA makes a self-signed root (Istio's is RSA 2048, valid 10 years).
func NewCA() (*CA, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{Organization: []string{TrustDomain}},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	return &CA{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// RootPEM is the root certificate, every proxy's trust anchor.
func (ca *CA) RootPEM() []byte { return ca.certPEM }

// Issue makes a key and a certificate for a SPIFFE ID, usable as client
// and server. It returns both PEM-encoded.
func (ca *CA) Issue(spiffeID string, kt KeyType) (certPEM, keyPEM []byte, err error) {
	u, err := url.Parse(spiffeID)
	if err != nil || u.Scheme != "spiffe" {
		return nil, nil, fmt.Errorf("issue certificate: %q is not a SPIFFE ID", spiffeID)
	}
	var key crypto.Signer
	switch kt {
	case ECDSAP256:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("issue certificate for %s: key: %w", spiffeID, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(certTTL),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		URIs:         []*url.URL{u},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("issue certificate for %s: %w", spiffeID, err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("issue certificate for %s: encode key: %w", spiffeID, err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
	return certPEM, keyPEM, nil
}

// serial is a random 128-bit serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		// crypto/rand does not fail on Linux; a fixed serial is still valid.
		return big.NewInt(1)
	}
	return n
}

// TrustDomain is the mesh's SPIFFE trust domain, Istio's default.
const TrustDomain = "cluster.local"

// SPIFFEID is the identity Istio gives a workload: its namespace and
// service account.
func SPIFFEID(namespace, serviceAccount string) string {
	return "spiffe://" + TrustDomain + "/ns/" + namespace + "/sa/" + serviceAccount
}

// trustDomainPrefix matches every identity of the mesh.
const trustDomainPrefix = "spiffe://" + TrustDomain + "/"

// Identity is a pod's SPIFFE ID.
func (p Pod) Identity() string { return SPIFFEID(p.Namespace, p.ServiceAccount) }
