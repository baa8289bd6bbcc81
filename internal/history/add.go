package history

import (
	"context"
	"fmt"
	"io"
)

// Added is what adding one results directory did.
type Added struct {
	Dir     string `json:"dir"`
	ID      string `json:"run"`
	New     bool   `json:"new"`
	Figures int    `json:"figures"`
}

// AddDirs adds results directories to the history. Every directory is
// read, and checked, before any is added: one that cannot be added stops
// them all, with nothing written. Reading computes every figure, a few
// seconds a run; progress, when set, gets a line as each begins.
func AddDirs(ctx context.Context, s *Store, dirs []string, progress io.Writer) ([]Added, error) {
	runs := make([]*Run, 0, len(dirs))
	for i, dir := range dirs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if progress != nil {
			fmt.Fprintf(progress, "reading %s (%d of %d)\n", dir, i+1, len(dirs))
		}
		r, err := Read(dir)
		if err != nil {
			return nil, fmt.Errorf("history add: %w", err)
		}
		runs = append(runs, r)
	}
	var out []Added
	for i, r := range runs {
		added, err := s.Add(ctx, r)
		if err != nil {
			return out, err
		}
		out = append(out, Added{Dir: dirs[i], ID: r.ID, New: added, Figures: len(r.Figures)})
	}
	return out, nil
}
