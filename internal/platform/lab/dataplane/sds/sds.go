package sds

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	secret "github.com/envoyproxy/go-control-plane/envoy/service/secret/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"
)

// The secret names istiod's configuration refers to.
const (
	WorkloadCert = "default"
	RootCert     = "ROOTCA"
)

const secretType = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"

// Identity is what a proxy presents and trusts, PEM-encoded.
type Identity struct {
	CertPEM, KeyPEM, RootPEM []byte
}

// Server serves the identities registered for proxies, by node id.
type Server struct {
	srv *grpc.Server

	mu  sync.Mutex
	ids map[string]Identity
}

// New makes a server with no identities; register one per proxy before
// it starts.
func New() *Server {
	s := &Server{srv: grpc.NewServer(), ids: map[string]Identity{}}
	secret.RegisterSecretDiscoveryServiceServer(s.srv, sdsServer{s: s})
	return s
}

// Register sets the identity served to the proxy whose node id is node.
func (s *Server) Register(node string, id Identity) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids[node] = id
}

// Serve serves SDS on l until Stop.
func (s *Server) Serve(l net.Listener) error { return s.srv.Serve(l) }

// Stop ends every stream.
func (s *Server) Stop() { s.srv.Stop() }

func (s *Server) identity(node string) (Identity, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.ids[node]
	return id, ok
}

// Secret is one named secret of an identity.
func (id Identity) Secret(name string) (*tls.Secret, error) {
	switch name {
	case WorkloadCert:
		return &tls.Secret{Name: name, Type: &tls.Secret_TlsCertificate{TlsCertificate: &tls.TlsCertificate{
			CertificateChain: &core.DataSource{Specifier: &core.DataSource_InlineBytes{InlineBytes: id.CertPEM}},
			PrivateKey:       &core.DataSource{Specifier: &core.DataSource_InlineBytes{InlineBytes: id.KeyPEM}},
		}}}, nil
	case RootCert:
		return &tls.Secret{Name: name, Type: &tls.Secret_ValidationContext{ValidationContext: &tls.CertificateValidationContext{
			TrustedCa: &core.DataSource{Specifier: &core.DataSource_InlineBytes{InlineBytes: id.RootPEM}},
		}}}, nil
	}
	return nil, fmt.Errorf("no secret %q: only %q and %q are served", name, WorkloadCert, RootCert)
}

type sdsServer struct {
	secret.UnimplementedSecretDiscoveryServiceServer
	s *Server
}

// StreamSecrets answers each new set of requested names; an ACK (the same
// names again) gets no answer. Identities do not rotate.
func (h sdsServer) StreamSecrets(stream secret.SecretDiscoveryService_StreamSecretsServer) error {
	var node string
	var sent []string
	for n := 0; ; n++ {
		req, err := stream.Recv()
		if err != nil {
			return nil // the proxy went away
		}
		if n == 0 {
			node = req.GetNode().GetId()
		}
		if msg := req.GetErrorDetail().GetMessage(); msg != "" {
			return status.Errorf(codes.InvalidArgument, "proxy %s rejected its secrets: %s", node, msg)
		}
		names := slices.Sorted(slices.Values(req.GetResourceNames()))
		if slices.Equal(names, sent) {
			continue
		}
		id, ok := h.s.identity(node)
		if !ok {
			return status.Errorf(codes.NotFound, "no identity for proxy %q", node)
		}
		resp := &discovery.DiscoveryResponse{TypeUrl: secretType, VersionInfo: "1", Nonce: strconv.Itoa(n)}
		for _, name := range names {
			sec, err := id.Secret(name)
			if err != nil {
				return status.Error(codes.NotFound, err.Error())
			}
			a, err := anypb.New(sec)
			if err != nil {
				return err
			}
			resp.Resources = append(resp.Resources, a)
		}
		if err := stream.Send(resp); err != nil {
			return errors.Join(errors.New("send secrets"), err)
		}
		sent = names
	}
}
