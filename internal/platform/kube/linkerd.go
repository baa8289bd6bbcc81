package kube

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
)

const (
	linkerdNamespace    = "linkerd"
	annotLinkerdInject  = "linkerd.io/inject"
	annotLinkerdInbound = "config.linkerd.io/default-inbound-policy"
	annotLinkerdAwait   = "config.linkerd.io/proxy-await"
)

// linkerdPlan installs Linkerd's CRDs and control plane from the user's
// Helm repositories, with a fresh trust anchor and issuer, the proxy
// requests the 50-tenant study set, injection by namespace annotation and
// inbound traffic restricted to authenticated (mTLS) clients.
func (p *kubePlatform) linkerdPlan(pl meshPlan) (meshPlan, error) {
	m := pl.Spec
	anchor, issuerCert, issuerKey, err := linkerdCerts(time.Now())
	if err != nil {
		return meshPlan{}, fmt.Errorf("linkerd identity: %w", err)
	}
	sel, tol := placementValues(p.place(infra.NodeMesh))
	pl.Namespaces = []string{linkerdNamespace}
	// As `linkerd install` labels it: the proxy injector leaves the
	// control plane's own pods alone.
	pl.SystemLabels = map[string]map[string]string{linkerdNamespace: {
		"linkerd.io/is-control-plane":          "true",
		"linkerd.io/control-plane-ns":          linkerdNamespace,
		"config.linkerd.io/admission-webhooks": "disabled",
	}}
	pl.Releases = []helmRelease{
		{Chart: mesh.ChartLinkerdCRDs, Name: "linkerd-crds", Namespace: linkerdNamespace, Values: map[string]any{}},
		{Chart: mesh.ChartLinkerdControl, Name: "linkerd-control-plane", Namespace: linkerdNamespace, Values: map[string]any{
			"identityTrustAnchorsPEM": anchor,
			"identity": map[string]any{"issuer": map[string]any{"tls": map[string]any{
				"crtPEM": issuerCert, "keyPEM": issuerKey,
			}}},
			"proxy": map[string]any{
				"cores": m.Workers,
				"resources": map[string]any{
					"cpu":    map[string]any{"request": m.ProxyCPU},
					"memory": map[string]any{"request": m.ProxyMemory},
				},
			},
			"nodeSelector": sel,
			"tolerations":  tol,
		}},
	}
	pl.NSAnnotations = map[string]string{
		annotLinkerdInject:  "enabled",
		annotLinkerdInbound: "all-authenticated",
	}
	return pl, nil
}

// linkerdCerts makes a trust anchor and an issuer signed by it, as
// `step certificate create` does in Linkerd's Helm instructions. They live
// only as long as the cell.
func linkerdCerts(now time.Time) (anchorPEM, issuerPEM, issuerKeyPEM string, err error) {
	anchorKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", "", err
	}
	anchor := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "root.linkerd.cluster.local"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, MaxPathLen: 1,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	anchorDER, err := x509.CreateCertificate(rand.Reader, anchor, anchor, &anchorKey.PublicKey, anchorKey)
	if err != nil {
		return "", "", "", err
	}
	issuerKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", "", err
	}
	issuer := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "identity.linkerd.cluster.local"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, MaxPathLen: 0, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	issuerDER, err := x509.CreateCertificate(rand.Reader, issuer, anchor, &issuerKey.PublicKey, anchorKey)
	if err != nil {
		return "", "", "", err
	}
	keyDER, err := x509.MarshalECPrivateKey(issuerKey)
	if err != nil {
		return "", "", "", err
	}
	enc := func(typ string, der []byte) string {
		return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
	}
	return enc("CERTIFICATE", anchorDER), enc("CERTIFICATE", issuerDER), enc("EC PRIVATE KEY", keyDER), nil
}
