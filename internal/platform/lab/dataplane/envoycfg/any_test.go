package envoycfg

import (
	"encoding/json"
	"testing"
)

func TestAnyMarshal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Any
		want string
	}{
		{name: "no fields", in: Any{Type: "envoy.extensions.filters.http.router.v3.Router"},
			want: `{"@type":"type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"}`},
		{name: "struct fields", in: Any{Type: "x.v3.TcpProxy", Value: TCPProxy{StatPrefix: "s", Cluster: "c"}},
			want: `{"@type":"type.googleapis.com/x.v3.TcpProxy","cluster":"c","stat_prefix":"s"}`},
		{name: "nested any", in: Any{Type: "a.A", Value: map[string]any{"t": Any{Type: "b.B"}}},
			want: `{"@type":"type.googleapis.com/a.A","t":{"@type":"type.googleapis.com/b.B"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("got %s, want %s", b, tt.want)
			}
		})
	}
	if _, err := json.Marshal(Any{Type: "x", Value: []int{1}}); err == nil {
		t.Error("a non-object value marshalled")
	}
}
