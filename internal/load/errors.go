package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/meshbench/meshbench/internal/http1wire"
)

// OptionError says which option is invalid. Field is the option's name as
// the command line spells its flag ("rate", "connections"), so that the CLI
// can say "--rate must be positive" and other callers their own field path.
type OptionError struct {
	Field   string
	Problem string
}

func (e *OptionError) Error() string { return e.Field + " " + e.Problem }

// The kinds of error a request can end with, the keys of Result.ErrorKinds.
const (
	KindRefused = "connection refused"
	KindTimeout = "timeout"
	KindReset   = "connection reset"
	KindClosed  = "connection closed early"
	// KindStreamReset is an HTTP/2 request whose stream the server reset.
	KindStreamReset = "stream reset"
	KindProtocol    = "protocol error"
	KindTLS         = "tls"
	KindDNS         = "dns"
	// KindNoPort is a connect that found no free local port
	// (EADDRNOTAVAIL): the generator's address had used up its ephemeral
	// ports to the target. KindNoFiles is a socket the generator could
	// not open for want of descriptors (EMFILE, ENFILE). Both are the
	// generator's own limits, not the server's: see Result.OwnLimit.
	KindNoPort  = "no local port"
	KindNoFiles = "out of file descriptors"
	KindOther   = "other"
	// A gRPC call answered with a status other than OK is of kind "grpc "
	// and the code's name: "grpc Unavailable", "grpc PermissionDenied".
)

// errTimeout marks a request that completed after --timeout had passed.
var errTimeout = errors.New("request exceeded the timeout")

func protocolError(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{http1wire.ErrProtocol}, a...)...)
}

// errorKind sorts a request's error into one of the kinds above, so that
// results from several generators aggregate by kind.
func errorKind(err error) string {
	var dnsErr *net.DNSError
	var tlsErr tls.AlertError
	var certErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	var grpcErr *grpcStatusError
	var resetErr *h2StreamError
	var awayErr *h2GoAwayError
	switch {
	case errors.As(err, &grpcErr):
		return grpcKind(grpcErr.code)
	case errors.As(err, &resetErr):
		return KindStreamReset
	case errors.As(err, &awayErr):
		// The server shut the connection down before the request.
		return KindClosed
	case errors.Is(err, errTimeout), errors.Is(err, os.ErrDeadlineExceeded),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, syscall.ETIMEDOUT):
		return KindTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return KindRefused
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return KindNoPort
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return KindNoFiles
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return KindReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return KindClosed
	case errors.Is(err, http1wire.ErrProtocol):
		return KindProtocol
	case errors.As(err, &dnsErr):
		return KindDNS
	case errors.As(err, &tlsErr), errors.As(err, &certErr), errors.As(err, &recErr):
		return KindTLS
	default:
		return KindOther
	}
}
