package sds

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	secret "github.com/envoyproxy/go-control-plane/envoy/service/secret/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

func serve(t *testing.T) (*Server, secret.SecretDiscoveryServiceClient) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "sds")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	s := New()
	go s.Serve(l)
	t.Cleanup(s.Stop)
	cc, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return s, secret.NewSecretDiscoveryServiceClient(cc)
}

func secrets(t *testing.T, resp *discovery.DiscoveryResponse) map[string]*tls.Secret {
	t.Helper()
	out := map[string]*tls.Secret{}
	for _, a := range resp.GetResources() {
		var s tls.Secret
		if err := a.UnmarshalTo(&s); err != nil {
			t.Fatal(err)
		}
		out[s.GetName()] = &s
	}
	return out
}

func TestStreamSecrets(t *testing.T) {
	s, c := serve(t)
	node := "sidecar~10.0.0.1~a.ns~ns.svc.cluster.local"
	s.Register(node, Identity{CertPEM: []byte("cert"), KeyPEM: []byte("key"), RootPEM: []byte("root")})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := c.StreamSecrets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&discovery.DiscoveryRequest{Node: &core.Node{Id: node}, ResourceNames: []string{WorkloadCert}}); err != nil {
		t.Fatal(err)
	}
	resp, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	got := secrets(t, resp)
	tc := got[WorkloadCert].GetTlsCertificate()
	if len(got) != 1 || string(tc.GetCertificateChain().GetInlineBytes()) != "cert" || string(tc.GetPrivateKey().GetInlineBytes()) != "key" {
		t.Fatalf("first answer: %v", got)
	}
	// The ACK is not answered; the next answer is for the new names.
	if err := st.Send(&discovery.DiscoveryRequest{ResourceNames: []string{WorkloadCert}, ResponseNonce: resp.GetNonce(), VersionInfo: resp.GetVersionInfo()}); err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&discovery.DiscoveryRequest{ResourceNames: []string{RootCert, WorkloadCert}, ResponseNonce: resp.GetNonce()}); err != nil {
		t.Fatal(err)
	}
	resp2, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	got = secrets(t, resp2)
	if resp2.GetNonce() != "2" || len(got) != 2 || string(got[RootCert].GetValidationContext().GetTrustedCa().GetInlineBytes()) != "root" {
		t.Errorf("second answer (nonce %s): %v", resp2.GetNonce(), got)
	}
}

func TestStreamSecretsUnknownProxy(t *testing.T) {
	_, c := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := c.StreamSecrets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&discovery.DiscoveryRequest{Node: &core.Node{Id: "stranger"}, ResourceNames: []string{WorkloadCert}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); status.Code(err) != codes.NotFound {
		t.Errorf("unknown proxy: %v, want NotFound", err)
	}
}
