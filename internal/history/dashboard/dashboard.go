package dashboard

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshbench/meshbench/internal/analysis"
	"github.com/meshbench/meshbench/internal/history"
	"github.com/meshbench/meshbench/internal/report"
	"github.com/meshbench/meshbench/internal/report/chart"
)

//go:embed page.html.tmpl
var pageFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"num": num,
	"pct": func(v, level float64) string {
		if level == 0 {
			return "level 0"
		}
		return fmt.Sprintf("%.1f%% of the level", 100*math.Abs(v/level))
	},
	"meshes": func(r *history.Run) string {
		var out []string
		for _, m := range r.Meshes {
			s := m.Name
			if m.Release != "" {
				s += " (" + m.Release + ")"
			}
			out = append(out, s)
		}
		return strings.Join(out, ", ")
	},
	"last": func(i int, runs []*history.Run) bool { return i == len(runs)-1 },
	"fig": func(f *history.Figure) string {
		if f == nil {
			return "—"
		}
		s := num(f.Median)
		if f.Level > 0 {
			s += fmt.Sprintf(" [%s, %s]", num(f.Lo), num(f.Hi))
		}
		return s + fmt.Sprintf(" n=%d", f.N)
	},
}).ParseFS(pageFS, "page.html.tmpl"))

// DefaultMetrics are the series the front page shows: the gate's primary
// metrics and the latency a mesh adds.
var DefaultMetrics = append(slices.Clone(history.PrimaryMetrics), history.AddedMetric(analysis.P50))

// Handler serves the dashboard of a history.
type Handler struct {
	Store  *history.Store
	Logger *slog.Logger
	mux    *http.ServeMux
}

// New returns the dashboard's handler.
func New(st *history.Store, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{Store: st, Logger: log, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /{$}", h.index)
	h.mux.HandleFunc("GET /series", h.series)
	h.mux.HandleFunc("GET /compare", h.compare)
	h.mux.HandleFunc("GET /runs/{id}/report", h.report)
	return h
}

// ServeHTTP answers only requests to a loopback name, so that a page
// elsewhere cannot reach the dashboard by pointing its own host name at
// 127.0.0.1 (DNS rebinding), and sets a policy that lets the pages load
// nothing and run no script.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		http.Error(w, "the dashboard answers on loopback only", http.StatusMisdirectedRequest)
		return
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	h.mux.ServeHTTP(w, r)
}

// seriesView is one series as a page shows it.
type seriesView struct {
	Index int
	S     history.SeriesSummary
	Chart template.HTML
	Where string
}

func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	metrics := r.URL.Query()["metric"]
	if len(metrics) == 0 {
		metrics = DefaultMetrics
	}
	study := r.URL.Query().Get("study")
	all, err := h.Store.Load(r.Context(), metrics...)
	if err != nil {
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	var runs []*history.Run
	for _, run := range all {
		if study == "" || run.Study == study {
			runs = append(runs, run)
		}
	}
	data := struct {
		Runs                  []*history.Run
		Where, Study, Metrics string
		Stable, Unstable      []seriesView
		Short                 []seriesView
		UnstablePct           float64
	}{Runs: runs, Where: h.Store.String(), Study: study, Metrics: strings.Join(metrics, ", "), UnstablePct: history.UnstablePct}
	for i, s := range history.Build(runs) {
		a := history.Analyze(s)
		v := seriesView{Index: i, S: a.Summary(), Chart: trendChart(a)}
		switch {
		case a.TooShort:
			data.Short = append(data.Short, v)
		case a.Unstable:
			data.Unstable = append(data.Unstable, v)
		default:
			data.Stable = append(data.Stable, v)
		}
	}
	h.render(w, "index", data)
}

func (h *Handler) series(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	var key history.Key
	if err := json.Unmarshal([]byte(id), &key); err != nil {
		h.fail(w, http.StatusBadRequest, fmt.Errorf("series %q: not a series: %v", id, err))
		return
	}
	runs, err := h.Store.Load(r.Context(), key.Metric)
	if err != nil {
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	for _, s := range history.Build(runs) {
		if s.Key == key {
			a := history.Analyze(s)
			h.render(w, "detail", seriesView{S: a.Summary(), Chart: trendChart(a), Where: h.Store.String()})
			return
		}
	}
	h.fail(w, http.StatusNotFound, fmt.Errorf("the history has no such series"))
}

// compareRow is one figure of both runs.
type compareRow struct {
	Mesh, Config, Metric string
	A, B                 *history.Figure
	Ratio                string
}

// compare shows run B against run A: the report's comparison, computed
// from both results directories' raw data, when both are still where
// they were added from; else the two runs' stored figures side by side.
func (h *Handler) compare(w http.ResponseWriter, r *http.Request) {
	runs, err := h.Store.Load(r.Context())
	if err != nil {
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	a, b := find(runs, r.URL.Query().Get("a")), find(runs, r.URL.Query().Get("b"))
	if a == nil || b == nil {
		h.fail(w, http.StatusNotFound, errors.New("name two runs of the history: /compare?a=RUN&b=RUN"))
		return
	}
	var buf bytes.Buffer
	_, err = report.Generate(r.Context(), report.Options{Dirs: []string{a.Dir, b.Dir}, Compare: true, Print: report.PrintHTML, Stdout: &buf, Logger: h.Logger})
	if err == nil {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(buf.Bytes())
		return
	}
	data := struct {
		A, B  *history.Run
		Why   string
		Rows  []compareRow
		Where string
	}{A: a, B: b, Where: h.Store.String(),
		Why: fmt.Sprintf("The comparison from the raw data, each difference with its interval, needs both results directories (%v); these are the figures the history keeps, each with its own interval.", err)}
	type k struct{ mesh, config, metric string }
	rows := map[k]*compareRow{}
	var order []k
	for i, run := range []*history.Run{a, b} {
		for j := range run.Figures {
			f := &run.Figures[j]
			key := k{f.Mesh, f.Config, f.Metric}
			row := rows[key]
			if row == nil {
				row = &compareRow{Mesh: f.Mesh, Config: f.Config, Metric: f.Metric}
				rows[key] = row
				order = append(order, key)
			}
			if i == 0 {
				row.A = f
			} else {
				row.B = f
			}
		}
	}
	for _, key := range order {
		row := rows[key]
		row.Ratio = "—"
		if row.A != nil && row.B != nil && row.A.Median != 0 {
			row.Ratio = strconv.FormatFloat(row.B.Median/row.A.Median, 'f', 3, 64)
		}
		data.Rows = append(data.Rows, *row)
	}
	h.render(w, "compare", data)
}

// report is a run's report, written afresh from its results directory.
func (h *Handler) report(w http.ResponseWriter, r *http.Request) {
	runs, err := h.Store.Runs(r.Context())
	if err != nil {
		h.fail(w, http.StatusInternalServerError, err)
		return
	}
	run := find(runs, r.PathValue("id"))
	if run == nil {
		h.fail(w, http.StatusNotFound, errors.New("the history has no such run"))
		return
	}
	var buf bytes.Buffer
	if _, err := report.Generate(r.Context(), report.Options{Dirs: []string{run.Dir}, Print: report.PrintHTML, Stdout: &buf, Logger: h.Logger}); err != nil {
		h.fail(w, http.StatusNotFound, fmt.Errorf("run %s's report is made from its results directory, %s: %v", run.ID, run.Dir, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

func find(runs []*history.Run, id string) *history.Run {
	for _, r := range runs {
		if r.ID == id {
			return r
		}
	}
	return nil
}

func (h *Handler) render(w http.ResponseWriter, name string, data any) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		h.Logger.Error("dashboard page", "page", name, "err", err)
		http.Error(w, "page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

func (h *Handler) fail(w http.ResponseWriter, code int, err error) {
	var buf bytes.Buffer
	if perr := pages.ExecuteTemplate(&buf, "error", struct{ Message, Where string }{err.Error(), h.Store.String()}); perr != nil {
		http.Error(w, err.Error(), code)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

// trendChart draws a series: each point's median with its interval, in
// the series' order, each change point marked between the points it
// separates.
func trendChart(a *history.Analysis) template.HTML {
	pts := make([]chart.Point, len(a.Points))
	var ticks []chart.Tick
	// As many labels as fit the plot's width, at about 7 pixels a
	// character.
	longest := 1
	for i := range a.Points {
		longest = max(longest, len(a.PointLabel(i)))
	}
	fit := max(2, 480/(7*longest))
	every := max(1, (len(a.Points)+fit-1)/fit)
	for i, p := range a.Points {
		f := p.Figure
		pts[i] = chart.Point{X: float64(i), Y: f.Median, Lo: f.Lo, Hi: f.Hi}
		if i%every == 0 {
			ticks = append(ticks, chart.Tick{Value: float64(i), Label: a.PointLabel(i)})
		}
	}
	l := chart.Line{
		Title:  a.MeshLabel() + ": " + a.MetricLabel(),
		X:      chart.Axis{Label: "point (proxy release, then run date)", Min: -0.5, Max: float64(len(a.Points)) - 0.5, Ticks: ticks},
		Y:      chart.Axis{Label: a.MetricLabel()},
		Series: []chart.Series{{Name: a.Profile, Points: pts}},
	}
	for _, c := range a.Changes {
		l.Marks = append(l.Marks, chart.Mark{X: float64(c.At) - 0.5, Label: fmt.Sprintf("%+.1f%% from %s", c.Diff.Pct.Median, a.PointLabel(c.At))})
	}
	return template.HTML(l.SVG())
}

func num(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// Serve serves the dashboard on addr, which must be a loopback address,
// until ctx ends; ready, when set, is called with the page's URL once it
// listens.
func Serve(ctx context.Context, h *Handler, addr string, ready func(url string)) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %s: %v (want HOST:PORT, such as 127.0.0.1:8089)", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--listen %s: the dashboard listens on loopback only (127.0.0.1 or [::1])", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 5 * time.Minute, IdleTimeout: time.Minute}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	if ready != nil {
		ready("http://" + ln.Addr().String() + "/")
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	return nil
}
