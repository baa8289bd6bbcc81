package envoycfg

import (
	"encoding/json"
	"fmt"
)

// typePrefix starts every type URL of a typed_config.
const typePrefix = "type.googleapis.com/"

// Any is a protobuf Any in Envoy's JSON form: the message's fields plus an
// "@type" naming it.
type Any struct {
	Type  string // full proto name, e.g. envoy.extensions.filters.http.router.v3.Router
	Value any    // a struct or map marshalling to the message's fields; nil for none
}

// MarshalJSON writes the value's fields with "@type" added.
func (a Any) MarshalJSON() ([]byte, error) {
	fields := map[string]json.RawMessage{}
	if a.Value != nil {
		b, err := json.Marshal(a.Value)
		if err != nil {
			return nil, fmt.Errorf("typed config %s: %w", a.Type, err)
		}
		if err := json.Unmarshal(b, &fields); err != nil {
			return nil, fmt.Errorf("typed config %s: not an object: %w", a.Type, err)
		}
	}
	t, _ := json.Marshal(typePrefix + a.Type)
	fields["@type"] = t
	return json.Marshal(fields)
}

// Extension is a named extension with its typed config: a filter, a
// transport socket, an access logger.
type Extension struct {
	Name        string `json:"name"`
	TypedConfig Any    `json:"typed_config"`
}

// Ext makes an Extension.
func Ext(name, typ string, value any) Extension {
	return Extension{Name: name, TypedConfig: Any{Type: typ, Value: value}}
}

// Empty is a message with no fields set.
type Empty struct{}
