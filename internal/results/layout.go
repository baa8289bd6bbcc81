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

// Bounds on what meshbench reads from a results directory, which may come
// from someone else: a file over its bound is refused before any of it is
// read (a sparse file of terabytes costs its maker nothing). Each is many
// times what the largest run meshbench makes writes.
const (
	// MaxIndexBytes bounds the index: about 1 KB a cell, and a study has
	// at most 10,000 cells (30 times the largest built-in study's),
	// each with its attempts.
	MaxIndexBytes = 64 << 20
	// MaxCellBytes bounds a cell file. Its bulk is the resource samples,
	// about 100 bytes a container and sample, every 0.5 s on the lab
	// (every 15 s on Kubernetes): 256 MiB holds 360 containers sampled
	// for an hour on the lab, about 40 times a default cell's 60 KB a
	// minute.
	MaxCellBytes = 256 << 20
	// MaxStudyBytes bounds the study file and the graph file, which
	// people write: the largest built-in study is 13 KB.
	MaxStudyBytes = 1 << 20
)
