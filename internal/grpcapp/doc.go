// Package grpcapp defines the test service's one gRPC method, shared by the
// app that serves it and the load engine that calls it, so that neither
// needs generated code.
package grpcapp
