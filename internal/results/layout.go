package results

import (
	"path/filepath"
	"strconv"
)

// The files of a results directory besides the index.
const (
	// StudyFile is the study file exactly as it was run; its SHA-256 is
	// Index.StudyHash.
	StudyFile = "study.yaml"
	// GraphFile is the workload graph the study deployed, resolved and with
	// the study's overrides applied.
	GraphFile = "graph.yaml"
	// CellsDir holds one JSON file per finished cell.
	CellsDir = "cells"
	// LogFile is the run's log, the platform's included.
	LogFile = "logs/run.log"
	// PodLogDir holds every pod's log, <namespace>_<pod>.log, as the
	// platform kept it when it went down.
	PodLogDir = "logs/pods"
)

// CellFile is the path, relative to the results directory, of a cell's
// full result.
func CellFile(id string) string { return filepath.Join(CellsDir, id+".json") }

// AttemptFile is the path, relative to the results directory, of a cell's
// nth attempt: CellFile for the first, so that every attempt's file is
// kept.
func AttemptFile(id string, n int) string {
	if n <= 1 {
		return CellFile(id)
	}
	return filepath.Join(CellsDir, id+".attempt-"+strconv.Itoa(n)+".json")
}

// CellLogDir is the directory, relative to the results directory, of the
// logs of one cell's measurement: its load generators' output, and the
// logs of pods that restarted during it. Calibration measurements have
// theirs too, under the calibration cells' IDs.
func CellLogDir(id string) string { return filepath.Join("logs", CellsDir, id) }
