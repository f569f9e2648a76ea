// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
)

// findChromium returns the path of a Chromium (or Chrome) binary, or "".
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestReportBrowser opens the report page of table1 at smoke in a real
// headless Chromium and checks what a reader sees: no console error,
// every image rendered with a non-zero size, as many claim rows as repro
// verify has tests, every link to a run folder (and every other local
// link) resolving, and no horizontal scrolling of the page on a phone.
// It writes screenshots at 1280 px and at 390 px to the test's artifact
// folder (go test -artifacts keeps them).
//
// The results are a fixture made from the checked-in run table
// results/baselines/table1-smoke.parquet (see table1Fixture), so that the
// test takes seconds, not a sweep; set REPRO_REPORT_RESULTS to a results
// folder that holds table1 at smoke (repro run table1 --scale smoke
// --results DIR) to check a real one instead. The test is skipped where
// Chromium is absent; .ci/run installs it.
func TestReportBrowser(t *testing.T) {
	chromium := findChromium()
	if chromium == "" {
		t.Skip("skipped: no Chromium found (chromium, chromium-browser, google-chrome); apt-get install -y chromium runs this test")
	}
	root := os.Getenv("REPRO_REPORT_RESULTS")
	if root == "" {
		root = table1Fixture(t)
	}
	root, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "report", "table1", "--results", root); err != nil {
		t.Fatalf("repro report: %v", err)
	}
	// repro verify's tests over the same run table.
	stdout, _, _ := run(t, "verify", filepath.Join(root, "table1"), "--json")
	var v struct {
		Checks []json.RawMessage `json:"checks"`
	}
	if err := json.Unmarshal([]byte(stdout), &v); err != nil || len(v.Checks) == 0 {
		t.Fatalf("repro verify --json: %v; stdout:\n%s", err, stdout)
	}

	ctx, cancel := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	defer cancel()
	ctx, cancel = chromedp.NewContext(ctx)
	defer cancel()

	// Collect the console's errors while the page loads and is read.
	var (
		mu     sync.Mutex
		errs   []string
		nmsg   int
		done   = make(chan struct{})
		listen context.Context
		stop   context.CancelFunc
	)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting Chromium %s: %v", chromium, err)
	}
	listen, stop = context.WithCancel(ctx)
	messages := chromedp.Console(listen)
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			mu.Lock()
			nmsg++
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				errs = append(errs, fmt.Sprintf("%s %s:%d: %s", m.Type, m.URL, m.Line+1, m.Text))
			}
			mu.Unlock()
		}
	}()

	pageURL := (&url.URL{Scheme: "file", Path: filepath.Join(root, "table1", "report.html")}).String()
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
		t.Fatalf("opening %s: %v", pageURL, err)
	}

	// Every image is decoded and laid out with a non-zero size.
	type img struct {
		Alt                string
		Complete           bool
		NaturalW, NaturalH float64
		W, H               float64
	}
	imgs, err := chromedp.Run(ctx, chromedp.Evaluate[[]img](`Array.from(document.images).map(i => {
		const r = i.getBoundingClientRect();
		return {Alt: i.alt, Complete: i.complete, NaturalW: i.naturalWidth, NaturalH: i.naturalHeight, W: r.width, H: r.height};
	})`))
	if err != nil {
		t.Fatal(err)
	}
	if len(imgs) == 0 {
		t.Errorf("the page has no image; table1 has figures")
	}
	for _, im := range imgs {
		if !im.Complete || im.NaturalW == 0 || im.NaturalH == 0 || im.W == 0 || im.H == 0 {
			t.Errorf("image %q: complete %v, natural size %v×%v, laid out %v×%v; want it rendered with a non-zero size", im.Alt, im.Complete, im.NaturalW, im.NaturalH, im.W, im.H)
		}
	}

	// As many claim rows as repro verify has tests.
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#claims-table tbody tr.claim').length`))
	if err != nil {
		t.Fatal(err)
	}
	if rows != len(v.Checks) {
		t.Errorf("got %d claim rows, want the %d tests of repro verify", rows, len(v.Checks))
	}

	// Every link to a run folder resolves to a folder with a manifest;
	// every other local link resolves to a file.
	type link struct {
		Href string
		Run  bool
	}
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]link](`Array.from(document.querySelectorAll('a[href]')).map(a => ({Href: a.href, Run: a.classList.contains('run-link')}))`))
	if err != nil {
		t.Fatal(err)
	}
	runLinks := 0
	for _, l := range links {
		u, err := url.Parse(l.Href)
		if err != nil || u.Scheme != "file" {
			t.Errorf("link %q: want a local file link", l.Href)
			continue
		}
		if l.Run {
			runLinks++
			if _, err := os.Stat(filepath.Join(u.Path, results.ManifestFile)); err != nil {
				t.Errorf("run link %s does not resolve to a run folder: %v", l.Href, err)
			}
		} else if _, err := os.Stat(u.Path); err != nil {
			t.Errorf("link %s does not resolve: %v", l.Href, err)
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "table1", "runs", "*", results.ManifestFile))
	if runLinks == 0 || runLinks != len(dirs) {
		t.Errorf("got %d run links, want one per run folder (%d)", runLinks, len(dirs))
	}

	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	writeArtifact(t, "report-1280.png", shot)

	// On a phone the page itself never scrolls sideways: wide tables
	// scroll inside their own box.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(pageURL)); err != nil {
		t.Fatal(err)
	}
	over, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.documentElement.scrollWidth - window.innerWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if over > 0 {
		// Name the outermost elements that stick out, to say what to fix.
		wide, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('body *')).filter(e =>
			e.getBoundingClientRect().right > window.innerWidth + 1 && e.parentElement.getBoundingClientRect().right <= window.innerWidth + 1
		).slice(0, 5).map(e => e.tagName.toLowerCase() + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().width) + 'px')`))
		t.Errorf("at 390 px the page is %v px wider than the window; want no horizontal scrolling; sticking out: %v", over, wide)
	}
	phone, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	writeArtifact(t, "report-390.png", phone)

	// The index opens too, and links to the page.
	indexURL := (&url.URL{Scheme: "file", Path: filepath.Join(root, "index.html")}).String()
	if err := chromedp.Do(ctx, chromedp.Navigate(indexURL)); err != nil {
		t.Fatal(err)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('a[href="table1/report.html"]').length`))
	if err != nil || n != 1 {
		t.Errorf("index: got %d links to table1/report.html (%v), want 1", n, err)
	}

	// A probe error, logged last, shows that the listener hears the
	// console: once it arrives, so has everything the loads logged.
	const probe = "repro-console-probe"
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`console.error("`+probe+`")`)); err != nil {
		t.Fatal(err)
	}
	heard := false
	for range 100 {
		mu.Lock()
		heard = slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, probe) })
		mu.Unlock()
		if heard {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if !heard {
		t.Errorf("the console listener never heard the probe console.error: the check of console errors cannot see them")
	}
	for _, e := range errs {
		if !strings.Contains(e, probe) {
			t.Errorf("console: %s", e)
		}
	}
	t.Logf("%d console messages, %d images, %d claim rows, %d run links", nmsg, len(imgs), rows, runLinks)
}

// writeArtifact writes b to the test's artifact folder.
func writeArtifact(t *testing.T, name string, b []byte) {
	t.Helper()
	path := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// table1Fixture returns a results folder holding table1 at smoke made
// from the checked-in run table results/baselines/table1-smoke.parquet:
// for each run table1 expands into at smoke, the baseline's row of the
// same configuration becomes a run folder whose manifest holds the row's
// numbers (results, ε, δ, σ, q, steps, wall time) and fixture inputs, so
// its id is the one the current code gives it; runs.parquet is rewritten
// from these manifests. The baseline holds no privacy caveats, peak
// memory or warnings, so the fixture's runs have none. One run is
// damaged after its manifest is written (a file changed), and the last
// run of the expansion is left out, so the page shows a damaged and a
// missing run.
func table1Fixture(t *testing.T) string {
	t.Helper()
	s, err := experiments.Load("table1", &experiments.Options{Overrides: []string{"scale=smoke"}})
	if err != nil {
		t.Fatal(err)
	}
	base, err := results.ReadRuns(filepath.Join("..", "..", "results", "baselines", "table1-smoke.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	key := func(method, task string, seed int64, eps float64, params map[string]any) string {
		b, _ := json.Marshal(params)
		return fmt.Sprintf("%s|%s|%d|%v|%s", method, task, seed, eps, b)
	}
	rows := map[string]results.Run{}
	for _, r := range base {
		rows[key(r.Method, r.Task, r.Seed, r.EpsilonTarget, r.Params)] = r
	}
	root := t.TempDir()
	in := experiments.Inputs{Data: "data-fixture", Base: "pretrain-fixture"}
	var out []results.Run
	damaged := false
	configs := s.Expand()
	for i, c := range configs {
		if i == len(configs)-1 {
			continue // missing
		}
		params := c.Params
		if params == nil {
			params = map[string]any{}
		}
		r, ok := rows[key(c.Method, c.Task, c.Seed, float64(c.Epsilon), params)]
		if !ok {
			continue
		}
		id := c.ID(in)
		d := results.RunDir(root, s.Name, id)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		note := []byte("a fixture run made from results/baselines/table1-smoke.parquet, run " + r.RunID + "\n")
		if err := os.WriteFile(filepath.Join(d, "fixture.txt"), note, 0o644); err != nil {
			t.Fatal(err)
		}
		files, err := results.HashFiles(d)
		if err != nil {
			t.Fatal(err)
		}
		m := &results.Manifest{
			Format: results.Format, RunID: id, Experiment: s.Name, Status: r.Status, Error: r.Error, Config: c, Inputs: in,
			Seconds: r.Seconds, Steps: r.Steps, Files: files,
			Provenance: results.Provenance{Revision: "fixture", Code: "fixture"},
			Results:    map[string]results.Float{},
		}
		for k, v := range r.Results {
			m.Results[k] = results.Float(v)
		}
		acct := "rdp"
		if math.IsInf(r.EpsilonTarget, 1) {
			acct = "none"
		}
		zeroNaN := func(x float64) float64 {
			if math.IsNaN(x) {
				return 0
			}
			return x
		}
		m.Privacy = &results.Privacy{
			Accountant: acct, EpsilonTarget: results.Float(r.EpsilonTarget), Epsilon: results.Float(r.Epsilon), Delta: zeroNaN(r.Delta),
			Sigma: zeroNaN(r.Sigma), SampleRate: zeroNaN(r.SampleRate), Steps: r.Steps,
		}
		if math.IsNaN(r.Epsilon) {
			m.Privacy.Epsilon = results.Float(math.Inf(1))
		}
		if err := results.WriteManifest(d, m); err != nil {
			t.Fatal(err)
		}
		out = append(out, results.RunOf(m))
		if !damaged && c.Method == "dpzo" {
			if err := os.WriteFile(filepath.Join(d, "fixture.txt"), []byte("changed after the manifest\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			damaged = true
		}
	}
	if len(out) == 0 {
		t.Fatal("no run of table1 at smoke matches a row of the baseline")
	}
	if err := results.WriteRuns(filepath.Join(root, s.Name, results.RunsFile), out); err != nil {
		t.Fatal(err)
	}
	return root
}
