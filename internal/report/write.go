package report

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/results"
)

// Output formats.
const (
	FormatHTML     = "html"
	FormatMarkdown = "md"
	FormatSMP      = "smp"
)

// Formats Print renders in.
const (
	PrintJSON     = "json"
	PrintMarkdown = "markdown"
	PrintHTML     = "html"
)

// Output file names.
const (
	HTMLFile        = "report.html"
	MarkdownFile    = "report.md"
	SMPFile         = "smp.json"
	CompareHTMLFile = "compare.html"
	CompareMDFile   = "compare.md"
)

// Options say what to generate from where.
type Options struct {
	// Dirs holds one results directory, or two (A then B) with Compare.
	Dirs []string
	// Out is where the files go; default the (last) results directory.
	Out string
	// Formats to write: html, md, smp; default html and md.
	Formats []string
	// SMP also writes the SMP export to this file; "-" writes it to Stdout.
	SMP    string
	Stdout io.Writer
	// Print, when set, renders the report (or the comparison) on Stdout
	// in this format, PrintJSON, PrintMarkdown or PrintHTML, and writes
	// no file.
	Print   string
	Compare bool
	// FailOnRegression makes a comparison an error when the gate finds a
	// regression in its family (see analysis.Comparison.Gate), and refuses
	// (an *analysis.IncomparableError) runs whose set-ups differ outside
	// Vary, before anything is written.
	FailOnRegression bool
	// Gate is the gate's primary family; empty figures are
	// analysis.DefaultGate.
	Gate analysis.GateSpec
	// Vary names the set-up differences (analysis.VaryKinds) the
	// comparison is about, which the gate then accepts.
	Vary     []string
	Baseline string
	Logger   *slog.Logger
}

// ErrRegression is returned, wrapped, by a comparison with
// FailOnRegression that found a regression.
var ErrRegression = analysis.ErrRegression

// Generate writes the reports the options ask for and returns the paths
// it wrote.
func Generate(ctx context.Context, o Options) ([]string, error) {
	files, _, err := GenerateJudged(ctx, o)
	return files, err
}

// GenerateJudged is Generate that also returns the study's thresholds
// judged against the verdict (see Thresholds; none for a comparison).
// Thresholds not met are no error here (ThresholdsNotMet makes one); a
// kept study file whose thresholds cannot be read is, before anything is
// written.
func GenerateJudged(ctx context.Context, o Options) ([]string, []ThresholdOutcome, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	want := len(o.Dirs)
	if o.Compare {
		if want != 2 {
			return nil, nil, fmt.Errorf("--compare needs two results directories, A and B; got %d", want)
		}
		files, err := generateComparison(ctx, o, log)
		return files, nil, err
	}
	if want != 1 {
		return nil, nil, fmt.Errorf("report needs one results directory; got %d (use --compare for two)", want)
	}
	formats := o.Formats
	if len(formats) == 0 {
		formats = []string{FormatHTML, FormatMarkdown}
	}
	for _, f := range formats {
		if !slices.Contains([]string{FormatHTML, FormatMarkdown, FormatSMP}, f) {
			return nil, nil, fmt.Errorf("unknown --format %q: use html, md or smp", f)
		}
	}
	d, err := analysis.Load(o.Dirs[0], analysis.Options{Baseline: o.Baseline, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	judged, err := Thresholds(d)
	if err != nil {
		return nil, nil, err
	}
	if o.Print != "" {
		return nil, judged, printDocument(o, build(d, judged, nil))
	}
	out := cmp.Or(o.Out, o.Dirs[0])
	var written []string
	write := func(name string, data []byte) error {
		p := filepath.Join(out, name)
		if err := results.WriteFile(out, name, data); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		written = append(written, p)
		return nil
	}
	if slices.Contains(formats, FormatHTML) || slices.Contains(formats, FormatMarkdown) {
		doc := build(d, judged, nil)
		log.Debug("report built", "sections", len(doc.Sections), "charts", len(doc.Charts()), "excluded", len(d.Excluded))
		if err := writeDocument(doc, formats, write); err != nil {
			return written, judged, err
		}
	}
	if slices.Contains(formats, FormatSMP) || o.SMP != "" {
		var buf bytes.Buffer
		if err := WriteSMP(&buf, d); err != nil {
			return written, judged, err
		}
		switch {
		case o.SMP == "-":
			if o.Stdout == nil {
				return written, judged, fmt.Errorf("--smp -: no standard output to write to")
			}
			if _, err := o.Stdout.Write(buf.Bytes()); err != nil {
				return written, judged, err
			}
		case o.SMP != "":
			if err := results.WriteFile(filepath.Dir(o.SMP), filepath.Base(o.SMP), buf.Bytes()); err != nil {
				return written, judged, fmt.Errorf("write SMP export: %w", err)
			}
			written = append(written, o.SMP)
		}
		if slices.Contains(formats, FormatSMP) && o.SMP == "" {
			if err := write(SMPFile, buf.Bytes()); err != nil {
				return written, judged, err
			}
		}
	}
	return written, judged, nil
}

// writeDocument writes report.html and report.md with its charts.
func writeDocument(doc *Document, formats []string, write func(string, []byte) error) error {
	if slices.Contains(formats, FormatHTML) {
		var buf bytes.Buffer
		if err := WriteHTML(&buf, doc); err != nil {
			return fmt.Errorf("render HTML: %w", err)
		}
		if err := write(HTMLFile, buf.Bytes()); err != nil {
			return err
		}
	}
	if slices.Contains(formats, FormatMarkdown) {
		var buf bytes.Buffer
		if err := WriteMarkdown(&buf, doc); err != nil {
			return fmt.Errorf("render Markdown: %w", err)
		}
		if err := write(MarkdownFile, buf.Bytes()); err != nil {
			return err
		}
		for _, c := range doc.Charts() {
			if err := write(filepath.Join(ChartDir, c.File+".svg"), []byte(c.SVG)); err != nil {
				return err
			}
		}
	}
	return nil
}

// printDocument renders a document on Stdout in the format Print names.
// JSON holds every table and text but not the charts' SVG, which are
// drawings of the same figures.
func printDocument(o Options, doc *Document) error {
	if o.Stdout == nil {
		return fmt.Errorf("-o %s: no standard output to write to", o.Print)
	}
	switch o.Print {
	case PrintJSON:
		enc := json.NewEncoder(o.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	case PrintMarkdown:
		return WriteMarkdown(o.Stdout, doc)
	case PrintHTML:
		return WriteHTML(o.Stdout, doc)
	}
	return fmt.Errorf("-o %q: want json, markdown or html", o.Print)
}
