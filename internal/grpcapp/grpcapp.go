package grpcapp

import (
	"context"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The method every service of a graph serves: a unary call whose request
// is a google.protobuf.BytesValue (its bytes are ignored) and whose answer
// is a BytesValue holding the JSON call tree the HTTP paths answer. The
// well-known type is compiled into google.golang.org/protobuf already, so
// no protoc is needed, and any gRPC client can call it.
const (
	ServiceName = "meshbench.App"
	MethodName  = "Call"
	Method      = "/" + ServiceName + "/" + MethodName
)

// Responder answers one call: the body of the answer and its HTTP status,
// which a non-2xx turns into a gRPC status carrying the body as message.
type Responder func(ctx context.Context) (body []byte, status int)

// Register serves the method on s by r.
func Register(s *grpc.Server, r Responder) {
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: ServiceName,
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: MethodName,
			Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				if err := dec(new(wrapperspb.BytesValue)); err != nil {
					return nil, err
				}
				body, st := r(ctx)
				if st/100 == 2 {
					return &wrapperspb.BytesValue{Value: body}, nil
				}
				return nil, status.Error(CodeOf(st), string(body))
			},
		}},
	}, struct{}{})
}

// CodeOf maps the test service's HTTP status to the gRPC code it answers
// with, as Envoy's gRPC bridge would.
func CodeOf(httpStatus int) codes.Code {
	switch httpStatus {
	case http.StatusOK:
		return codes.OK
	case http.StatusGatewayTimeout:
		return codes.DeadlineExceeded
	case http.StatusServiceUnavailable, http.StatusBadGateway:
		return codes.Unavailable
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusNotFound:
		return codes.Unimplemented
	case http.StatusTooManyRequests:
		return codes.ResourceExhausted
	default:
		return codes.Internal
	}
}

// HTTPStatus maps a gRPC code back to the HTTP status the call tree
// records, the inverse of CodeOf where that is one to one.
func HTTPStatus(c codes.Code) int {
	switch c {
	case codes.OK:
		return http.StatusOK
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.PermissionDenied:
		return http.StatusForbidden
	case codes.Unauthenticated:
		return http.StatusUnauthorized
	case codes.Unimplemented:
		return http.StatusNotFound
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	default:
		return http.StatusInternalServerError
	}
}
