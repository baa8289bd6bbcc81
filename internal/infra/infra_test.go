package infra

import (
	"strings"
	"testing"
)

func TestNameNodes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		nodes []NodeSpec
		want  []string
	}{
		{"roles only", []NodeSpec{{Role: NodeApp}, {Role: NodeLoad}, {Role: NodeApp}}, []string{"app-1", "load-1", "app-2"}},
		{"named kept", []NodeSpec{{Name: "front", Role: NodeApp}, {Role: NodeApp}}, []string{"front", "app-2"}},
		{"none", nil, nil},
	}
	for _, tt := range tests {
		NameNodes(tt.nodes)
		var got []string
		for _, n := range tt.nodes {
			got = append(got, n.Name)
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: names %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []int
		wantErr bool
	}{
		{name: "single", in: "1", want: []int{1}},
		{name: "range and single", in: "0-2,5", want: []int{0, 1, 2, 5}},
		{name: "reversed range", in: "3-1", wantErr: true},
		{name: "word", in: "all", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCPUList(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}
