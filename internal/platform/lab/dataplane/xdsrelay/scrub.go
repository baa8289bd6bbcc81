package xdsrelay

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	udpatype "github.com/cncf/xds/go/udpa/type/v1"
	xdstype "github.com/cncf/xds/go/xds/type/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/anypb"

	// The resource types and the extensions that hold other extensions,
	// registered so that the walk can open them.
	_ "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/set_filter_state/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/set_filter_state/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/service/secret/v3"
)

// Actions a Change records.
const (
	Removed  = "removed"         // the extension was taken out of its list
	Optional = "marked optional" // is_optional set: Envoy skips it when it has no implementation
	Renamed  = "factory renamed" // a filter-state factory key replaced by upstream's equivalent
)

// Change is one edit the relay made to a resource from istiod.
type Change struct {
	ResourceType string `json:"resource_type"` // the resource's type URL
	Resource     string `json:"resource"`      // the resource's name
	Extension    string `json:"extension"`     // the extension's name (or the factory key)
	Type         string `json:"type"`          // the extension's type URL, a TypedStruct's inner one
	Action       string `json:"action"`
}

// istioTypesInEnvoyNamespace are istio-proxy's own config messages that
// are named as if they were Envoy's; every other Istio-only type is
// outside Envoy's API packages (envoyAPIPackages).
var istioTypesInEnvoyNamespace = map[string]bool{
	"envoy.tcp.metadataexchange.config.MetadataExchange":            true,
	"envoy.extensions.network_filters.peer_metadata.Config":         true,
	"envoy.extensions.network_filters.peer_metadata.UpstreamConfig": true,
}

// envoyAPIPackages are the proto packages of Envoy's own API and its
// dependencies: types outside them are not Envoy's.
var envoyAPIPackages = []string{"envoy.", "xds.", "udpa.", "google.protobuf."}

// upstreamFactories maps istio-proxy's filter-state object factories to
// upstream Envoy's equivalents.
var upstreamFactories = map[string]string{
	"istio.hashable_string": "envoy.hashable_string",
}

// IstioOnly reports whether upstream Envoy lacks an implementation of a
// typed config's type (a type URL or a full message name).
func IstioOnly(typeURL string) bool {
	name := typeURL[strings.LastIndexByte(typeURL, '/')+1:]
	if istioTypesInEnvoyNamespace[name] {
		return true
	}
	for _, p := range envoyAPIPackages {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	return true
}

// Scrub edits one resource from istiod so that upstream Envoy can load it,
// returning the resource (the same one when nothing changed) and what was
// changed. A resource that cannot be decoded is an error.
func Scrub(res *anypb.Any) (*anypb.Any, []Change, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByURL(res.GetTypeUrl())
	if err != nil {
		// A type the relay does not know (ztunnel's workload API, say)
		// holds no Envoy extensions.
		return res, nil, nil
	}
	m := mt.New().Interface()
	if err := proto.Unmarshal(res.GetValue(), m); err != nil {
		return nil, nil, fmt.Errorf("decode %s: %w", res.GetTypeUrl(), err)
	}
	s := &scrubber{resType: res.GetTypeUrl(), resource: resourceName(m.ProtoReflect())}
	changed, err := s.message(m.ProtoReflect())
	if err != nil || !changed {
		return res, nil, err
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, nil, fmt.Errorf("encode %s %s: %w", res.GetTypeUrl(), s.resource, err)
	}
	return &anypb.Any{TypeUrl: res.GetTypeUrl(), Value: b}, s.changes, nil
}

// resourceName is a resource's name field (cluster_name for endpoints).
func resourceName(m protoreflect.Message) string {
	for _, f := range []protoreflect.Name{"name", "cluster_name"} {
		if fd := m.Descriptor().Fields().ByName(f); fd != nil && fd.Kind() == protoreflect.StringKind {
			return m.Get(fd).String()
		}
	}
	return ""
}

type scrubber struct {
	resType, resource string
	changes           []Change
}

func (s *scrubber) record(ext, typ, action string) {
	s.changes = append(s.changes, Change{ResourceType: s.resType, Resource: s.resource, Extension: ext, Type: typ, Action: action})
}

// message walks every populated field of m, editing extensions in place.
func (s *scrubber) message(m protoreflect.Message) (bool, error) {
	if m.Descriptor().FullName() == "google.protobuf.Any" {
		return s.any(m)
	}
	var fields []protoreflect.FieldDescriptor
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		fields = append(fields, fd)
		return true
	})
	// In field order, so that the changes come out the same every time.
	slices.SortFunc(fields, func(a, b protoreflect.FieldDescriptor) int { return cmp.Compare(a.Number(), b.Number()) })
	changed := false
	for _, fd := range fields {
		c, err := s.field(m, fd)
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	return changed, nil
}

func (s *scrubber) field(m protoreflect.Message, fd protoreflect.FieldDescriptor) (bool, error) {
	switch {
	case fd.IsMap():
		if fd.MapValue().Message() == nil {
			return false, nil
		}
		mp := m.Get(fd).Map()
		var keys []protoreflect.MapKey
		mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
			keys = append(keys, k)
			return true
		})
		slices.SortFunc(keys, func(a, b protoreflect.MapKey) int { return cmp.Compare(a.String(), b.String()) })
		changed := false
		for _, k := range keys {
			c, err := s.message(mp.Get(k).Message())
			if err != nil {
				return false, err
			}
			changed = changed || c
		}
		return changed, nil
	case fd.IsList():
		if fd.Message() == nil {
			return false, nil
		}
		return s.list(m.Mutable(fd).List())
	case fd.Message() != nil:
		el := m.Mutable(fd).Message()
		if name, typ, ok := istioExtension(el); ok {
			m.Clear(fd)
			s.record(name, typ, Removed)
			return true, nil
		}
		return s.message(el)
	case fd.Kind() == protoreflect.StringKind && fd.Name() == "factory_key":
		key := m.Get(fd).String()
		if up, ok := upstreamFactories[key]; ok {
			m.Set(fd, protoreflect.ValueOfString(up))
			s.record(key, string(m.Descriptor().FullName()), Renamed)
			return true, nil
		}
	}
	return false, nil
}

// list edits a repeated message field: Istio-only extensions are marked
// optional where the message allows it and removed otherwise; the rest
// are walked.
func (s *scrubber) list(l protoreflect.List) (bool, error) {
	changed := false
	kept := 0
	for i := 0; i < l.Len(); i++ {
		el := l.Get(i).Message()
		if name, typ, ok := istioExtension(el); ok {
			changed = true
			if opt := el.Descriptor().Fields().ByName("is_optional"); opt != nil && opt.Kind() == protoreflect.BoolKind {
				if !el.Get(opt).Bool() {
					el.Set(opt, protoreflect.ValueOfBool(true))
					s.record(name, typ, Optional)
				}
			} else {
				s.record(name, typ, Removed)
				continue
			}
		} else {
			c, err := s.message(el)
			if err != nil {
				return false, err
			}
			changed = changed || c
		}
		l.Set(kept, l.Get(i))
		kept++
	}
	if kept < l.Len() {
		l.Truncate(kept)
	}
	return changed, nil
}

// istioExtension reports whether m is a named extension (a message with
// a typed_config) whose type upstream Envoy does not implement, with its
// name and effective type URL.
func istioExtension(m protoreflect.Message) (name, typ string, ok bool) {
	fd := m.Descriptor().Fields().ByName("typed_config")
	if fd == nil || fd.Message() == nil || fd.Message().FullName() != "google.protobuf.Any" || !m.Has(fd) {
		return "", "", false
	}
	a, ok := m.Get(fd).Message().Interface().(*anypb.Any)
	if !ok {
		return "", "", false
	}
	typ = effectiveType(a)
	if !IstioOnly(typ) {
		return "", "", false
	}
	if nd := m.Descriptor().Fields().ByName("name"); nd != nil && nd.Kind() == protoreflect.StringKind {
		name = m.Get(nd).String()
	}
	return name, typ, true
}

// effectiveType is an Any's type URL, or the one a TypedStruct in it
// names (how Istio carries configs of types it has no Go code for).
func effectiveType(a *anypb.Any) string {
	switch a.GetTypeUrl() {
	case "type.googleapis.com/xds.type.v3.TypedStruct":
		var ts xdstype.TypedStruct
		if a.UnmarshalTo(&ts) == nil {
			return ts.GetTypeUrl()
		}
	case "type.googleapis.com/udpa.type.v1.TypedStruct":
		var ts udpatype.TypedStruct
		if a.UnmarshalTo(&ts) == nil {
			return ts.GetTypeUrl()
		}
	}
	return a.GetTypeUrl()
}

// any opens an Any whose type the relay knows, walks it and re-encodes
// it when something changed.
func (s *scrubber) any(m protoreflect.Message) (bool, error) {
	a, ok := m.Interface().(*anypb.Any)
	if !ok {
		return false, nil
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByURL(a.GetTypeUrl())
	if err != nil {
		return false, nil // holds no extensions the relay edits
	}
	inner := mt.New().Interface()
	if err := proto.Unmarshal(a.GetValue(), inner); err != nil {
		return false, fmt.Errorf("%s %s: decode %s: %w", s.resType, s.resource, a.GetTypeUrl(), err)
	}
	changed, err := s.message(inner.ProtoReflect())
	if err != nil || !changed {
		return false, err
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(inner)
	if err != nil {
		return false, fmt.Errorf("%s %s: encode %s: %w", s.resType, s.resource, a.GetTypeUrl(), err)
	}
	a.Value = b
	return true, nil
}
