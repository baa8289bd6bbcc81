package cli

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/report"
	"github.com/meshbench/meshbench/internal/study"
)

// printThresholds prints each judged threshold on its line, and returns
// the error (exit 4) of those not met.
func printThresholds(w io.Writer, judged []report.ThresholdOutcome) error {
	for _, o := range judged {
		if _, err := fmt.Fprintln(w, o.Line()); err != nil {
			return err
		}
	}
	return report.ThresholdsNotMet(judged)
}

// judgeRun judges a finished run's thresholds from its results directory,
// as meshbench report does, and prints them; nil when the study sets none.
func judgeRun(w io.Writer, dir string, st *study.Study, log *slog.Logger) error {
	if len(st.Thresholds) == 0 {
		return nil
	}
	d, err := analysis.Load(dir, analysis.Options{Logger: log})
	if err == nil {
		var judged []report.ThresholdOutcome
		if judged, err = report.Thresholds(d); err == nil {
			return printThresholds(w, judged)
		}
	}
	return fmt.Errorf("the study's thresholds could not be judged: %w", err)
}
