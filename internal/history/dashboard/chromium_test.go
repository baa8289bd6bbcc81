package dashboard

import (
	"context"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/meshbench/meshbench/internal/testenv"
)

const chromiumPath = "/usr/bin/chromium"

// chartProbe counts the charts the browser laid out, those with a data
// mark of a size, and the change-point markers drawn.
const chartProbe = `(() => {
  const charts = document.querySelectorAll("svg.chart");
  let drawn = 0, markers = 0;
  charts.forEach(svg => {
    if ([...svg.querySelectorAll(".mark")].some(m => { const b = m.getBBox(); return b.width > 0 || b.height > 0; })) drawn++;
    svg.querySelectorAll(".marker line").forEach(l => { if (l.getBBox().height > 0) markers++; });
  });
  return {charts: charts.length, drawn, markers, runs: document.querySelectorAll("#run-list tbody tr").length};
})()`

type probeResult struct {
	Charts, Drawn, Markers, Runs int
}

// TestIntegrationDashboardInChromium serves the fixture history and reads
// it in headless Chromium as a user would: every chart drawn with the
// step marked, the runs listed, a comparison reached through the form and
// a report through a run's link; nothing fetched from anywhere but the
// dashboard and no console message.
func TestIntegrationDashboardInChromium(t *testing.T) {
	testenv.Integration(t)
	_, err := os.Stat(chromiumPath)
	testenv.Need(t, err == nil, "Chromium at %s (scripts/setup.sh test installs it with apt-get)", chromiumPath)
	st, _ := fixture(t)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	urls := make(chan string, 1)
	served := make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() { served <- Serve(sctx, New(st, nil), "127.0.0.1:0", func(u string) { urls <- u }) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	var base string
	select {
	case base = <-urls:
	case err := <-served:
		t.Fatalf("serve: %v", err)
	}
	origin, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 2400),
	}
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	var mu sync.Mutex
	var foreign, console []string
	err = chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if u, err := url.Parse(e.Request.URL); err != nil || (u.Host != origin.Host && u.Scheme != "data") {
				foreign = append(foreign, e.Request.URL)
			}
		case *runtime.EventConsoleAPICalled:
			console = append(console, string(e.Type))
		case *runtime.EventExceptionThrown:
			console = append(console, e.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			console = append(console, e.Entry.Text)
		}
	})
	if err != nil {
		t.Fatal(err)
	}

	if err := chromedp.Do(bctx, chromedp.Navigate(base), chromedp.WaitVisible(chromedp.CSS("#run-list"))); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(bctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	p, err := chromedp.Run(bctx, chromedp.Evaluate[probeResult](chartProbe))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%q: %d runs, %d charts, %d drawn, %d change points marked", title, p.Runs, p.Charts, p.Drawn, p.Markers)
	if p.Runs != fixtureRuns || p.Charts == 0 || p.Drawn != p.Charts || p.Markers == 0 {
		t.Errorf("the page shows %d runs (want %d), %d charts of which %d drawn, %d change points marked", p.Runs, fixtureRuns, p.Charts, p.Drawn, p.Markers)
	}

	// The comparison, through the form (first run against the last), and
	// a report, through a run's link.
	if _, err := chromedp.RunResponse(bctx, chromedp.Click(chromedp.CSS("#compare-form button"))); err != nil {
		t.Fatal(err)
	}
	compareTitle, err := chromedp.Run(bctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(base)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.RunResponse(bctx, chromedp.Click(chromedp.CSS("#run-list a.report"))); err != nil {
		t.Fatal(err)
	}
	reportHeading, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("h1")))
	if err != nil {
		t.Fatal(err)
	}
	verdict, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.getElementById("verdict") !== null`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("comparison %q; report %q", compareTitle, reportHeading)
	if !strings.Contains(compareTitle, "meshbench comparison") {
		t.Errorf("the compare form led to %q, not a comparison", compareTitle)
	}
	if reportHeading == "" || !verdict {
		t.Errorf("a run's report link led to a page headed %q, verdict section %v", reportHeading, verdict)
	}
	mu.Lock()
	if len(foreign) > 0 {
		t.Errorf("the pages fetched from elsewhere: %v", foreign)
	}
	if len(console) > 0 {
		t.Errorf("console messages: %v", console)
	}
	mu.Unlock()

	// The checks above can only pass if they watch: an image from
	// elsewhere, added to the page, must be caught.
	if err := chromedp.Do(bctx, chromedp.Navigate(base)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(bctx, chromedp.Evaluate[any](`(() => { const i = document.createElement("img"); i.src = "http://127.0.0.2:9/x.png"; document.body.appendChild(i); return 1; })()`)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(foreign) == 0 && len(console) == 0 {
		t.Error("an image from elsewhere went unnoticed: the checks are blind")
	}
}
