package topology

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration written as a string such as "10ms" in YAML
// and JSON, where a bare integer of nanoseconds would be unreadable.
type Duration time.Duration

// D returns the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats the duration as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a duration string; bare numbers are refused because
// their unit would be a guess.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration such as \"30s\" or \"10ms\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q: want a duration such as \"30s\" or \"1.5s\"", s)
	}
	*d = Duration(v)
	return nil
}
