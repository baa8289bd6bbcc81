package resources

import "testing"

func TestParseCPU(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    int64
		wantErr bool
	}{
		{name: "empty", in: "", want: 0},
		{name: "millicores", in: "700m", want: 700},
		{name: "cores", in: "2", want: 2000},
		{name: "fraction", in: "0.5", want: 500},
		{name: "leading dot", in: ".25", want: 250},
		{name: "rounds up", in: "0.0001", want: 1},
		{name: "micro", in: "1500u", want: 2},
		{name: "exponent", in: "1e1", want: 10000},
		{name: "negative", in: "-1", wantErr: true},
		{name: "unit typo", in: "700 m", wantErr: true},
		{name: "word", in: "lots", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseCPU(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseCPU(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseMemory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    int64
		wantErr bool
	}{
		{name: "empty", in: "", want: 0},
		{name: "Mi", in: "500Mi", want: 500 << 20},
		{name: "Gi fraction", in: "1.5Gi", want: 3 << 29},
		{name: "decimal M", in: "128M", want: 128e6},
		{name: "k", in: "1k", want: 1000},
		{name: "bytes", in: "4096", want: 4096},
		{name: "exponent", in: "2E3", want: 2000},
		{name: "milli rounds up", in: "1500m", want: 2},
		{name: "MB is not a suffix", in: "500MB", wantErr: true},
		{name: "too large", in: "100Ei", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseMemory(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseMemory(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}
