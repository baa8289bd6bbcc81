package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshbench/meshbench/internal/testenv"
)

const chromiumPath = "/usr/bin/chromium"

// probe runs in a copy of the report, after everything else: it counts
// the charts, and in each the data marks the browser actually laid out
// with a size, and writes the counts into the DOM for --dump-dom.
const probe = `<script>
(function () {
  var charts = document.querySelectorAll("svg.chart"), drawn = 0, marks = 0;
  charts.forEach(function (svg) {
    var ok = false;
    svg.querySelectorAll(".mark").forEach(function (m) {
      var b = m.getBBox();
      if (b.width > 0 || b.height > 0) { marks++; ok = true; }
    });
    if (ok) drawn++;
  });
  var out = document.createElement("pre");
  out.id = "meshbench-probe";
  out.textContent = "charts=" + charts.length + " drawn=" + drawn + " marks=" + marks;
  document.body.appendChild(out);
})();
</script>`

// chromium runs headless Chromium with a fresh profile and returns its
// stdout and stderr. It runs in its own process group, so that on a
// timeout the browser's helper processes go with it.
func chromium(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, chromiumPath, append(base, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // any helper left behind
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), errb.String()
}

// consoleLines returns Chromium's log lines for console messages: script
// errors, and fetches the content security policy refused.
func consoleLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, ":CONSOLE") || strings.Contains(l, "Refused to") || strings.Contains(l, "Uncaught") {
			out = append(out, l)
		}
	}
	return out
}

// withProbe copies the report with the probe script added and the policy
// relaxed for inline scripts only; fetches stay forbidden.
func withProbe(t *testing.T, html, extraBody string) string {
	t.Helper()
	html = strings.Replace(html, "default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';", 1)
	html = strings.Replace(html, "</body>", extraBody+probe+"</body>", 1)
	p := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(p, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// verdictProbe reads what a reader sees first: whether a visible banner
// comes before the first table, which section that table is in, its
// header, how many rows it has, how many of those show every interval
// (latency, throughput, CPU, CPU per proxy pass, memory per proxy and
// dollars), the banner's text, how many ranking sentences sit above the
// banner, and whether the table of contents follows the verdict.
const verdictProbe = `<script>
(function () {
  var banner = document.getElementById("banner"), table = document.querySelector("table");
  var before = banner && table && banner.getBoundingClientRect().height > 0 &&
    (banner.compareDocumentPosition(table) & Node.DOCUMENT_POSITION_FOLLOWING) ? 1 : 0;
  var section = table ? table.closest("section").id : "";
  var head = table ? Array.from(table.querySelectorAll("th")).map(function (th) { return th.textContent; }).join("|") : "";
  var rows = table ? table.querySelectorAll("tbody tr") : [], full = 0;
  rows.forEach(function (tr) {
    var td = tr.querySelectorAll("td"), ok = true;
    [1, 2, 3, 4, 5, 6, 7].forEach(function (k) { ok = ok && !!td[k] && /\[.+,.+\]/.test(td[k].textContent); });
    if (ok) full++;
  });
  var decision = document.getElementById("decision"), nav = document.querySelector("nav"), verdict = document.getElementById("verdict");
  var ranked = decision && banner && (decision.compareDocumentPosition(banner) & Node.DOCUMENT_POSITION_FOLLOWING) ? decision.querySelectorAll("li").length : 0;
  var navAfter = nav && verdict && (verdict.compareDocumentPosition(nav) & Node.DOCUMENT_POSITION_FOLLOWING) ? 1 : 0;
  var out = document.createElement("pre");
  out.id = "meshbench-verdict";
  out.textContent = "banner-first=" + before + " section=" + section + " head=" + head + " rows=" + rows.length + " full=" + full +
    " bannertext=" + (banner ? banner.textContent.replace(/\s+/g, " ") : "") + " ranked=" + ranked + " nav-after=" + navAfter + " END";
  document.body.appendChild(out);
})();
</script>`

var verdictRE = regexp.MustCompile(`banner-first=(\d) section=(\S*) head=(.*?) rows=(\d+) full=(\d+) bannertext=(.*?) ranked=(\d+) nav-after=(\d) END`)

var probeRE = regexp.MustCompile(`charts=(\d+) drawn=(\d+) marks=(\d+)`)

func TestIntegrationReportInChromium(t *testing.T) {
	testenv.Integration(t)
	_, err := os.Stat(chromiumPath)
	testenv.Need(t, err == nil, "Chromium at %s (scripts/setup.sh installs it with apt-get)", chromiumPath)
	html, doc := renderHTML(t)

	t.Run("every chart drawn, no console errors", func(t *testing.T) {
		dom, stderr := chromium(t, "--dump-dom", "file://"+withProbe(t, html, ""))
		m := probeRE.FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("the probe did not run; console: %v", consoleLines(stderr))
		}
		charts, _ := strconv.Atoi(m[1])
		drawn, _ := strconv.Atoi(m[2])
		marks, _ := strconv.Atoi(m[3])
		if charts != len(doc.Charts()) || drawn != charts || marks < charts {
			t.Errorf("%d charts in the page, %d drawn, %d marks; the report has %d charts", charts, drawn, marks, len(doc.Charts()))
		}
		if l := consoleLines(stderr); len(l) > 0 {
			t.Errorf("console messages:\n%s", strings.Join(l, "\n"))
		}
		t.Logf("%d charts drawn with %d marks", drawn, marks)
	})

	// The check above can only pass if the console is watched: a page that
	// tries a fetch must be caught.
	t.Run("a fetch would be caught", func(t *testing.T) {
		_, stderr := chromium(t, "--dump-dom", "file://"+withProbe(t, html, `<img src="http://127.0.0.1:9/x.png">`))
		if len(consoleLines(stderr)) == 0 {
			t.Error("an external image went unreported: the console check is blind")
		}
	})

	t.Run("banner and verdict lead the page", func(t *testing.T) {
		dom, stderr := chromium(t, "--dump-dom", "file://"+withProbe(t, html, verdictProbe))
		m := verdictRE.FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("the verdict probe did not run; console: %v", consoleLines(stderr))
		}
		t.Logf("verdict probe: %s", m[0])
		if m[1] != "1" {
			t.Error("no banner is shown above the first table")
		}
		if m[2] != "verdict" {
			t.Errorf("the first table is in section %q, want the verdict", m[2])
		}
		for _, h := range []string{"p50 (ms)", "p95 / p99 (ms)", "Throughput (req/s)", "Data-plane CPU (cores)",
			"CPU per proxy pass (cores per 1,000 req/s; Istio publishes 0.20)", "Memory per proxy (MiB)", "USD per million requests"} {
			if !strings.Contains(m[3], h) {
				t.Errorf("the verdict's header %q has no %q", m[3], h)
			}
		}
		if want := strconv.Itoa(len(doc.Sections[0].Blocks[0].Table.Rows)); m[4] != want || m[4] != "3" {
			t.Errorf("the verdict shows %s rows, want one per mesh (3)", m[4])
		}
		if m[5] != "2" {
			t.Errorf("%s of the 2 meshes' verdict rows show latency, throughput, CPU, CPU per proxy pass, memory per proxy and dollars with their intervals", m[5])
		}
		if !strings.Contains(m[6], "Emulated") || !strings.Contains(m[6], "ztunnel") || !strings.Contains(m[6], "understated") ||
			!strings.Contains(m[6], "overstated") || !strings.Contains(m[6], "Not measured here") {
			t.Errorf("the banner does not say what the lab emulates, which way it biases each mesh and what was not measured: %q", m[6])
		}
		if want := strconv.Itoa(len(doc.Verdict.Ranking)); m[7] != want || m[7] == "0" {
			t.Errorf("%s ranking sentences above the banner, want the verdict's %s", m[7], want)
		}
		if m[8] != "1" {
			t.Error("the table of contents does not follow the verdict")
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "report.html")
		if err := os.WriteFile(p, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
		shot := os.Getenv("MESHBENCH_REPORT_SCREENSHOT")
		if shot == "" {
			shot = filepath.Join(dir, "report.png")
		}
		chromium(t, "--screenshot="+shot, "--window-size=1280,4200", "--hide-scrollbars", "file://"+p)
		b, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("\x89PNG")) || len(b) < 50_000 {
			t.Errorf("screenshot %s is not a plausible PNG (%d bytes)", shot, len(b))
		}
		t.Logf("screenshot: %s (%d bytes)", shot, len(b))
	})
}
