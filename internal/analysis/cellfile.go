package analysis

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/meshbench/meshbench/internal/infra"
	"github.com/meshbench/meshbench/internal/mesh"
	"github.com/meshbench/meshbench/internal/metrics"
	"github.com/meshbench/meshbench/internal/results"
	"github.com/meshbench/meshbench/internal/results/confined"
)

// cellFile is the part of results.Cell a report reads. Decoding into it
// skips the per-generator results and the per-class histograms, which a
// 50-namespace study holds by the hundred, so that a large study fits in
// memory while every cell is read.
type cellFile struct {
	results.Summary
	MeshSpec mesh.MeshSpec `json:"mesh_spec"`
	Load     results.Load  `json:"load"`
	Merged   *mergedResult `json:"merged"`
	// Generators are read for each one's offered rate only.
	Generators []struct {
		Options struct {
			Rate float64 `json:"rate"`
		} `json:"options"`
	} `json:"generators"`
	Resources []metrics.Series        `json:"resources"`
	Replicas  []infra.ReplicaRequests `json:"replicas"`
}

// mergedResult is the part of load.Result a report reads.
type mergedResult struct {
	Start       time.Time     `json:"start"`
	End         time.Time     `json:"end"`
	Requests    int64         `json:"requests"`
	Errors      int64         `json:"errors"`
	StatusCodes map[int]int64 `json:"status_codes"`
	// NewConnections, absent before schema 10, reads as 0.
	NewConnections int64              `json:"new_connections"`
	Latency        *metrics.Histogram `json:"latency"`
	Distorted      bool               `json:"distorted"`
	Warnings       []string           `json:"warnings"`
}

func readCell(dir string, s results.Summary) (*cellFile, error) {
	if s.File == "" {
		return nil, fmt.Errorf("cell %s: no file in %s", s.ID, results.IndexFile)
	}
	// The index names the file: refused if it leads out of the results
	// directory, through a link, or is larger than a cell can be.
	b, err := confined.ReadFile(dir, s.File, results.MaxCellBytes)
	if err != nil {
		return nil, err
	}
	var c cellFile
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", s.File, err)
	}
	// The index is what the runner last wrote about the cell; it wins over
	// a cell file left from an interrupted attempt.
	c.Summary = s
	return &c, nil
}
