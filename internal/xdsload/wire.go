package xdsload

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
)

// Type URLs of the resources the clients subscribe to.
const (
	TypeCluster       = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	TypeListener      = "type.googleapis.com/envoy.config.listener.v3.Listener"
	TypeEndpoint      = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"
	TypeRoute         = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
	TypeAddress       = "type.googleapis.com/istio.workload.Address"
	TypeAuthorization = "type.googleapis.com/istio.security.Authorization"

	typeHCM = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
)

// The gRPC methods of Envoy's aggregated discovery service.
const (
	methodSotW  = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources"
	methodDelta = "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources"
)

// Node is the identity a client presents: envoy.config.core.v3.Node's id,
// cluster and metadata.
type Node struct {
	ID       string
	Cluster  string
	Metadata map[string]any // JSON-like values, as structpb takes them
}

func (n Node) marshal() ([]byte, error) {
	var b []byte
	b = appendString(b, 1, n.ID)
	b = appendString(b, 2, n.Cluster)
	if len(n.Metadata) > 0 {
		s, err := structpb.NewStruct(n.Metadata)
		if err != nil {
			return nil, fmt.Errorf("node metadata: %w", err)
		}
		mb, err := proto.Marshal(s)
		if err != nil {
			return nil, err
		}
		b = appendBytes(b, 3, mb)
	}
	return b, nil
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// sotwRequest is envoy.service.discovery.v3.DiscoveryRequest.
func sotwRequest(node []byte, typeURL, version, nonce string, names []string) []byte {
	var b []byte
	b = appendString(b, 1, version)
	if node != nil {
		b = appendBytes(b, 2, node)
	}
	for _, n := range names {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, n)
	}
	b = appendString(b, 4, typeURL)
	return appendString(b, 5, nonce)
}

// deltaRequest is envoy.service.discovery.v3.DeltaDiscoveryRequest; no
// names subscribed is a wildcard subscription.
func deltaRequest(node []byte, typeURL, nonce string) []byte {
	var b []byte
	if node != nil {
		b = appendBytes(b, 1, node)
	}
	b = appendString(b, 2, typeURL)
	return appendString(b, 6, nonce)
}

// Response is one decoded discovery response.
type Response struct {
	TypeURL string
	Version string
	Nonce   string
	// Raw is the whole message as received, for callers that look for a
	// change in it; Size is its length.
	Raw []byte
	// Resources holds each resource's serialized message (an Any's value).
	Resources [][]byte
	// Removed lists the names a delta response removes.
	Removed []string
}

// Size is the response's length on the wire, without gRPC framing.
func (r *Response) Size() int { return len(r.Raw) }

var errMalformed = errors.New("malformed xDS message")

// fields calls f for each field of a message.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errMalformed
		}
		b = b[n:]
		var v []byte
		switch typ {
		case protowire.BytesType:
			var m int
			v, m = protowire.ConsumeBytes(b)
			n = m
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n >= 0 {
				v = b[:n]
			}
		}
		if n < 0 {
			return errMalformed
		}
		b = b[n:]
		if err := f(num, typ, v); err != nil {
			return err
		}
	}
	return nil
}

// anyValue returns an Any's type URL and value.
func anyValue(b []byte) (typeURL string, value []byte, err error) {
	err = fields(b, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			typeURL = string(v)
		case 2:
			value = v
		}
		return nil
	})
	return typeURL, value, err
}

// parseSotW decodes a DiscoveryResponse.
func parseSotW(raw []byte) (*Response, error) {
	r := &Response{Raw: raw}
	err := fields(raw, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			r.Version = string(v)
		case 2:
			_, val, err := anyValue(v)
			if err != nil {
				return err
			}
			r.Resources = append(r.Resources, val)
		case 4:
			r.TypeURL = string(v)
		case 5:
			r.Nonce = string(v)
		}
		return nil
	})
	return r, err
}

// parseDelta decodes a DeltaDiscoveryResponse.
func parseDelta(raw []byte) (*Response, error) {
	r := &Response{Raw: raw}
	err := fields(raw, func(num protowire.Number, typ protowire.Type, v []byte) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			r.Version = string(v)
		case 2: // Resource: its field 2 is the Any
			return fields(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
				if num != 2 || typ != protowire.BytesType {
					return nil
				}
				_, val, err := anyValue(v)
				if err == nil {
					r.Resources = append(r.Resources, val)
				}
				return err
			})
		case 4:
			r.TypeURL = string(v)
		case 5:
			r.Nonce = string(v)
		case 6:
			r.Removed = append(r.Removed, string(v))
		}
		return nil
	})
	return r, err
}

// edsNames returns the EDS resource names a set of clusters needs: the
// service name of each EDS cluster, or its name when it has none.
func edsNames(clusters [][]byte) ([]string, error) {
	var out []string
	for _, c := range clusters {
		var name, service string
		eds := false
		err := fields(c, func(num protowire.Number, typ protowire.Type, v []byte) error {
			switch {
			case num == 1 && typ == protowire.BytesType:
				name = string(v)
			case num == 2 && typ == protowire.VarintType:
				t, _ := protowire.ConsumeVarint(v)
				eds = t == 3 // Cluster.DiscoveryType EDS
			case num == 3 && typ == protowire.BytesType:
				return fields(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
					if num == 2 && typ == protowire.BytesType {
						service = string(v)
					}
					return nil
				})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if !eds {
			continue
		}
		if service == "" {
			service = name
		}
		out = append(out, service)
	}
	return out, nil
}

// rdsNames returns the route configurations the listeners' HTTP
// connection managers name through RDS.
func rdsNames(listeners [][]byte) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	filter := func(v []byte) error { // a Filter: name 1, typed_config 4
		return fields(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
			if num != 4 || typ != protowire.BytesType {
				return nil
			}
			tu, hcm, err := anyValue(v)
			if err != nil || tu != typeHCM {
				return err
			}
			return fields(hcm, func(num protowire.Number, typ protowire.Type, v []byte) error {
				if num != 3 || typ != protowire.BytesType { // rds
					return nil
				}
				return fields(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
					if num == 2 && typ == protowire.BytesType && !seen[string(v)] {
						seen[string(v)] = true
						out = append(out, string(v))
					}
					return nil
				})
			})
		})
	}
	chain := func(v []byte) error { // a FilterChain: filters 3
		return fields(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
			if num == 3 && typ == protowire.BytesType {
				return filter(v)
			}
			return nil
		})
	}
	for _, l := range listeners { // filter_chains 3, default_filter_chain 25
		err := fields(l, func(num protowire.Number, typ protowire.Type, v []byte) error {
			if (num == 3 || num == 25) && typ == protowire.BytesType {
				return chain(v)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
