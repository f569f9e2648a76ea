// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package page

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/reports"
	"github.com/repro-dp/repro/reports/specout"
)

var update = flag.Bool("update", false, "rewrite the golden outlines in testdata")

// TestBuildFixture checks what the page of the fixture shows against the
// fixture's construction (writeFixture) and against reports.Verify.
func TestBuildFixture(t *testing.T) {
	root, s := writeFixture(t, t.TempDir())
	p, err := Build(root, s, &Options{Now: fixtureNow})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	// Runs: 9 in the spec, in spec order (nonprivate first), each with
	// its status.
	if len(p.Runs) != 9 {
		t.Fatalf("got %d runs, want 9", len(p.Runs))
	}
	status := map[string]string{}
	for _, r := range p.Runs {
		status[r.ID] = r.Status
	}
	for _, tc := range []struct {
		method string
		eps    float64
		seed   int64
		want   string
	}{
		{"dpsgd", 8, 3, "damaged"},
		{"dpsgd", 1, 3, "failed"},
		{"dpsgd", 1, 1, "ok"},
	} {
		if got := status[fixtureID(t, s, tc.method, tc.eps, tc.seed)]; got != tc.want {
			t.Errorf("run %s ε=%v seed %d: got status %q, want %q", tc.method, tc.eps, tc.seed, got, tc.want)
		}
	}
	if r := p.Runs[2]; r.Status != "missing" || r.Method != "nonprivate" || r.Seed != "3" || r.Href != "" {
		t.Errorf("third run: got %+v, want the missing nonprivate seed 3 without a link", r)
	}
	wantCounts := []Count{{"ok", "ok", 6}, {"failed", "bad", 1}, {"damaged", "bad", 1}, {"missing", "bad", 1}}
	if !slices.Equal(p.RunCounts, wantCounts) {
		t.Errorf("run counts: got %v, want %v", p.RunCounts, wantCounts)
	}
	ok := p.Runs[3] // dpsgd ε=1 seed 1
	if ok.Epsilon != "0.999" || ok.Accountant != "rdp" || ok.Sigma != "1" || ok.Q != "0.1" || ok.Steps != "70" || ok.Memory != "200 MiB" {
		t.Errorf("privacy record of dpsgd ε=1 seed 1: got ε %s (%s), σ %s, q %s, steps %s, memory %s; want 0.999 (rdp), 1, 0.1, 70, 200 MiB",
			ok.Epsilon, ok.Accountant, ok.Sigma, ok.Q, ok.Steps, ok.Memory)
	}
	wantRes := []Result{{"acc", "61", ""}, {"mia_auc", "0.5", "[0.45, 0.55]"}}
	if !slices.Equal(ok.Results, wantRes) {
		t.Errorf("results of dpsgd ε=1 seed 1: got %v, want %v", ok.Results, wantRes)
	}

	// Claims: one row per test of repro verify, with the same verdicts.
	runs, err := reports.ReadRuns(filepath.Join(root, s.Name, results.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	v, err := reports.Verify(runs, specout.ClaimsOf(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Claims) != len(v.Checks) {
		t.Fatalf("got %d claim rows, want the %d tests of Verify", len(p.Claims), len(v.Checks))
	}
	for i, c := range v.Checks {
		if r := p.Claims[i]; r.Claim != c.Claim || r.At != orNone(c.At) || r.Verdict != c.Verdict {
			t.Errorf("claim row %d: got %s %s %s, want %s %s %s", i, r.Claim, r.At, r.Verdict, c.Claim, c.At, c.Verdict)
		}
	}
	// The fixture's first claim starts on line 28 of its spec.
	first := p.Claims[0]
	if want := filepath.Join(filepath.Dir(s.FileName), "fixture.yaml") + ":28"; first.SpecLine != want {
		t.Errorf("spec line of dpsgd-rises: got %q, want %q", first.SpecLine, want)
	}
	if first.Paper != "82.52 vs 81.54" {
		t.Errorf("paper values of dpsgd-rises: got %q, want 82.52 vs 81.54", first.Paper)
	}

	// Tables: the dpsgd ε=1 cell holds seeds 1 and 2 (seed 3 failed):
	// acc 61 and 62, mean 61.5, sample std 1/√2 = 0.7071 → "0.71", n=2
	// of the fullest cells' 3; the paper's 81.54 beside it.
	if len(p.Tables) != 1 || p.Tables[0].Error != "" {
		t.Fatalf("tables: got %+v, want one table", p.Tables)
	}
	tab := p.Tables[0]
	cell := findCell(t, tab, "1", "dpsgd")
	if cell.Text != "61.50 ± 0.71 (n=2)" || cell.Ref != "81.54" {
		t.Errorf("dpsgd ε=1 cell: got %q [%q], want \"61.50 ± 0.71 (n=2)\" [\"81.54\"]", cell.Text, cell.Ref)
	}
	// nonprivate has no ε=1 runs: a missing cell says so.
	if c := findCell(t, tab, "1", "nonprivate"); !c.Missing || c.Text != "— no runs" {
		t.Errorf("nonprivate ε=1 cell: got %+v, want a missing cell", c)
	}

	// Figures: one, inlined as SVG.
	if len(p.Figures) != 1 || !strings.HasPrefix(string(p.Figures[0].Src), "data:image/svg+xml;base64,") || p.Figures[0].Width <= 0 {
		t.Errorf("figures: got %d, first %+.80v; want one SVG data URI with a size", len(p.Figures), p.Figures)
	}
	if !strings.HasPrefix(p.Mirrors, `fixture mirrors Table 1 of "A Paper" (a venue, 2026)`) {
		t.Errorf("mirrors: got %q, want the spec's leading comment", p.Mirrors)
	}
}

// findCell returns the cell of tab at row key eps and column method.
func findCell(t *testing.T, tab TableView, eps, method string) CellView {
	t.Helper()
	j := slices.Index(tab.Cols, method)
	for _, r := range tab.Rows {
		if r.Keys[0] == eps && j >= 0 {
			return r.Cells[j]
		}
	}
	t.Fatalf("table %s has no cell ε=%s %s (columns %v)", tab.Name, eps, method, tab.Cols)
	return CellView{}
}

// TestGolden compares the outline of the fixture's page and index (the
// element tree with ids, classes and short texts; see outline) with
// testdata/*.outline. Run with -update to rewrite them.
func TestGolden(t *testing.T) {
	dir := t.TempDir()
	root, s := writeFixture(t, dir)
	path, err := Write(root, s, &Options{Now: fixtureNow})
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	for _, tc := range []struct{ name, file string }{
		{"fixture", path},
		{"index", filepath.Join(root, IndexFile)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			got, err := outline(bytes.NewReader(b), dir)
			if err != nil {
				t.Fatalf("outline: %v", err)
			}
			checkGolden(t, tc.name, got)
		})
	}
}

// checkGolden compares the outline got with testdata/<name>.outline, or
// rewrites that file under -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", name+".outline")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		gotFile := filepath.Join("testdata", name+".got-outline")
		os.WriteFile(gotFile, []byte(got), 0o644)
		diff, _ := exec.Command("diff", "-u", golden, gotFile).CombinedOutput()
		t.Errorf("outline of %s differs from %s (got in %s; -update rewrites it):\n%s", name, golden, gotFile, diff)
	}
}

// TestNoBlankCell checks that no table cell of the fixture's page, which
// has a failed, a damaged and a missing run, is blank.
func TestNoBlankCell(t *testing.T) {
	root, s := writeFixture(t, t.TempDir())
	p, err := Build(root, s, &Options{Now: fixtureNow})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Render(&buf); err != nil {
		t.Fatal(err)
	}
	d := htmlDecoder(&buf)
	var stack []string
	var text []*strings.Builder
	cells := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tok.Name.Local)
			text = append(text, new(strings.Builder))
		case xml.CharData:
			for i := range text {
				text[i].Write(tok)
			}
		case xml.EndElement:
			n := len(stack) - 1
			if name := stack[n]; name == "td" || name == "th" {
				cells++
				if strings.TrimSpace(text[n].String()) == "" {
					t.Errorf("blank <%s> (cell %d)", name, cells)
				}
			}
			stack, text = stack[:n], text[:n]
		}
	}
	if cells < 100 {
		t.Errorf("got %d cells, want the fixture's hundreds", cells)
	}
}

// TestNoRunTable checks the page of an experiment whose folder holds
// runs but no run table: it says so instead of leaving sections blank.
func TestNoRunTable(t *testing.T) {
	root, s := writeFixture(t, t.TempDir())
	if err := os.Remove(filepath.Join(root, s.Name, results.RunsFile)); err != nil {
		t.Fatal(err)
	}
	p, err := Build(root, s, &Options{Now: fixtureNow})
	if err != nil {
		t.Fatal(err)
	}
	if p.ClaimsError != "no run table" || len(p.Tables) != 1 || p.Tables[0].Error != "no run table" || len(p.Figures) != 1 || p.Figures[0].Error != "no run table" {
		t.Errorf("got claims error %q, tables %+v, figures %d; want each to say there is no run table", p.ClaimsError, p.Tables, len(p.Figures))
	}
	if len(p.Runs) != 9 || len(p.Warnings) == 0 {
		t.Errorf("got %d runs and warnings %q; want the 9 runs and a warning", len(p.Runs), p.Warnings)
	}
}

// TestIndex checks that the index lists an experiment with a page, with
// its counts, and one with a run table but no page.
func TestIndex(t *testing.T) {
	root, s := writeFixture(t, t.TempDir())
	if _, err := Write(root, s, &Options{Now: fixtureNow}); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteRuns(filepath.Join(other, results.RunsFile), nil); err != nil {
		t.Fatal(err)
	}
	ix, err := BuildIndex(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Experiments) != 2 {
		t.Fatalf("got %d experiments, want fixture and other", len(ix.Experiments))
	}
	fx, ot := ix.Experiments[0], ix.Experiments[1]
	if fx.Href != "fixture/report.html" || fx.RunText != "6 ok, 1 failed, 1 damaged, 1 missing" || len(fx.Counts) != 5 {
		t.Errorf("fixture: got href %q, runs %q, verdicts %v", fx.Href, fx.RunText, fx.Counts)
	}
	if ot.Href != "" || !strings.Contains(ot.Problem, "no report yet") {
		t.Errorf("other: got href %q, problem %q; want no link and no report yet", ot.Href, ot.Problem)
	}
}

// runID matches a run id, and codeHash the fingerprint of the code on a
// run's path (repro.Code): both change with that code, so the outlines
// leave them out.
var (
	runID    = regexp.MustCompile(`\b[0-9a-f]{16}\b`)
	codeHash = regexp.MustCompile(`\b[0-9a-f]{64}\b`)
)

// htmlDecoder returns an encoding/xml decoder that reads the HTML the
// templates write (void elements unclosed, HTML entities).
func htmlDecoder(r io.Reader) *xml.Decoder {
	d := xml.NewDecoder(r)
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	return d
}

// outline returns the element tree of an HTML page, one element a line,
// indented by depth: its tag, id, class and role, and, for elements whose
// text a reader sees as a unit (headings, cells, links, badges, ...), the
// first 60 characters of its text. Style contents, data URIs and the
// temporary folder dir are left out, so that the outline shows the
// page's structure, not its bytes.
func outline(r io.Reader, dir string) (string, error) {
	d := htmlDecoder(r)
	type node struct {
		line string
		text strings.Builder
		show bool
	}
	var stack []*node
	var out []*node
	textual := map[string]bool{"title": true, "h1": true, "h2": true, "h3": true, "h4": true, "caption": true, "th": true, "td": true,
		"a": true, "summary": true, "dt": true, "dd": true, "li": true, "figcaption": true, "code": true, "p": true}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			var b strings.Builder
			b.WriteString(strings.Repeat("  ", len(stack)) + tok.Name.Local)
			show := textual[tok.Name.Local]
			for _, a := range tok.Attr {
				switch a.Name.Local {
				case "id", "class", "role", "colspan", "scope", "lang":
					fmt.Fprintf(&b, " %s=%q", a.Name.Local, a.Value)
				case "href":
					fmt.Fprintf(&b, " href=%q", strings.ReplaceAll(a.Value, dir, "DIR"))
				case "src":
					v := a.Value
					if i := strings.Index(v, ","); strings.HasPrefix(v, "data:") && i > 0 {
						v = v[:i+1] + "…"
					}
					fmt.Fprintf(&b, " src=%q", v)
				case "alt", "aria-label":
					fmt.Fprintf(&b, " %s=%q", a.Name.Local, a.Value)
				}
			}
			if tok.Name.Local == "span" && slices.ContainsFunc(tok.Attr, func(a xml.Attr) bool { return a.Name.Local == "class" && strings.HasPrefix(a.Value, "badge") }) {
				show = true
			}
			n := &node{line: b.String(), show: show}
			stack = append(stack, n)
			out = append(out, n)
		case xml.CharData:
			if len(stack) > 0 && stack[len(stack)-1].line != "" && !strings.HasSuffix(strings.TrimSpace(stack[len(stack)-1].line), "style") {
				for _, n := range stack {
					n.text.Write(tok)
				}
			}
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	var b strings.Builder
	for _, n := range out {
		b.WriteString(runID.ReplaceAllString(codeHash.ReplaceAllString(n.line, "CODE"), "RUN-ID"))
		if n.show {
			txt := strings.Join(strings.Fields(strings.ReplaceAll(n.text.String(), dir, "DIR")), " ")
			txt = runID.ReplaceAllString(codeHash.ReplaceAllString(txt, "CODE"), "RUN-ID")
			if r := []rune(txt); len(r) > 60 {
				txt = string(r[:60]) + "…"
			}
			fmt.Fprintf(&b, " %q", txt)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// TestComparisonFirst checks that a comparison with a baseline comes
// first on the page, its regressions before its improvements. The
// baseline is the fixture's run table with dpsgd's accuracies 10 points
// higher, so dpsgd at ε = 1 and 8 regressed by 10 (beyond the threshold
// of 5), and nonprivate's 5 points lower, so it improved by 5.
func TestComparisonFirst(t *testing.T) {
	root, s := writeFixture(t, t.TempDir())
	rows, err := results.ReadRuns(filepath.Join(root, s.Name, results.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if _, ok := rows[i].Results["acc"]; !ok {
			continue
		}
		if rows[i].Method == "dpsgd" {
			rows[i].Results["acc"] += 10
		} else {
			rows[i].Results["acc"] -= 5
		}
	}
	basePath := filepath.Join(t.TempDir(), "baseline.parquet")
	if err := results.WriteRuns(basePath, rows); err != nil {
		t.Fatal(err)
	}
	old, err := reports.ReadRuns(basePath)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := reports.ReadRuns(filepath.Join(root, s.Name, results.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := reports.Compare(old, cur, &reports.CompareOptions{Metrics: []string{"acc"}, Thresholds: map[string]reports.Threshold{"acc": {Better: "max", Threshold: 5}}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(root, s, &Options{Now: fixtureNow, Comparison: cmp, Baseline: "baseline.parquet"})
	if err != nil {
		t.Fatal(err)
	}
	c := p.Comparison
	if c == nil || len(c.Regressions) != 2 || len(c.Improvements) != 1 {
		t.Fatalf("got comparison %+v, want 2 regressions (dpsgd ε=1, 8) and 1 improvement (nonprivate)", c)
	}
	for _, r := range c.Regressions {
		if r.Metric != "acc" || r.Change != "-10" || !strings.Contains(r.Key, "dpsgd") {
			t.Errorf("regression %+v: want dpsgd's acc down by 10", r)
		}
	}
	if r := c.Improvements[0]; r.Change != "5" || !strings.Contains(r.Key, "nonprivate") {
		t.Errorf("improvement %+v: want nonprivate's acc up by 5", r)
	}
	var buf bytes.Buffer
	if err := p.Render(&buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	reg, imp, about := strings.Index(page, `id="regressions"`), strings.Index(page, `id="improvements"`), strings.Index(page, `id="about"`)
	if reg < 0 || !(reg < imp && imp < about) {
		t.Errorf("got the regressions at %d, the improvements at %d and the about section at %d; want them in this order", reg, imp, about)
	}
	if s := p.Summary(); s.Regressions != 2 {
		t.Errorf("summary: got %d regressions, want 2", s.Regressions)
	}
}

// TestInteractionClaim checks the claim rows of an interaction claim: the
// four cells (the means of a and b at x1 and at x2) of ours and of the
// paper, the gains, the effect (their difference), the Holm-adjusted p
// and the verdict, and compares the claims section's outline with
// testdata/interaction.outline (-update rewrites it).
func TestInteractionClaim(t *testing.T) {
	dir := t.TempDir()
	root, s := writeInteractionFixture(t, dir)
	p, err := Build(root, s, &Options{Now: fixtureNow})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if len(p.Claims) != 2 {
		t.Fatalf("got %d claim rows, want 2", len(p.Claims))
	}
	// The cells, by hand from writeInteractionFixture: DP-SGD 61, 62,
	// 63 (mean 62) at ε = 1 and 65, 66, 67 (66) at ε = 8; Dual-Priv
	// 67.3, 67.8, 69.5 (68.2) and 66.9, 68.4, 69 (68.1). Gains 6.2 and
	// 2.1; the per-seed differences of gains 4.4, 3.4, 4.5, mean 4.1,
	// sample sd √0.37, so t = 4.1/√(0.37/3) with 2 degrees of freedom,
	// whose upper tail has the closed form ½(1 − t/√(t² + 2)). The
	// p-value is two-sided, the same for both claims, and Holm over the
	// two tests doubles it.
	tt := 4.1 / math.Sqrt(0.37/3)
	pHolm := 2 * 2 * 0.5 * (1 - tt/math.Sqrt(tt*tt+2))
	for i, want := range []ClaimRow{
		{Claim: "gain-larger-at-eps1", Verdict: reports.Pass, Class: "ok",
			Expect: "(a − b | epsilon_target=1) > (a − b | epsilon_target=8)",
			Ours:   "gain 6.20 / 2.10", OursCells: "epsilon_target=1: 68.2 vs 62; epsilon_target=8: 68.1 vs 66",
			Paper: "gain 6.00 / 1.00 (+5.00)", PaperCells: "epsilon_target=1: 70 vs 64; epsilon_target=8: 72 vs 71",
			NA: 3, NB: 3, NA2: 3, NB2: 3, Effect: "4.1", P: num(pHolm), Test: "paired"},
		{Claim: "gain-smaller-at-eps1", Verdict: reports.Fail, Class: "bad",
			Expect: "(a − b | epsilon_target=1) < (a − b | epsilon_target=8)",
			Ours:   "gain 6.20 / 2.10", OursCells: "epsilon_target=1: 68.2 vs 62; epsilon_target=8: 68.1 vs 66",
			Paper: none, PaperCells: "",
			NA: 3, NB: 3, NA2: 3, NB2: 3, Effect: "4.1", P: num(pHolm), Test: "paired"},
	} {
		got := p.Claims[i]
		if got.Claim != want.Claim || got.Verdict != want.Verdict || got.Class != want.Class || got.Expect != want.Expect ||
			got.Ours != want.Ours || got.OursCells != want.OursCells || got.Paper != want.Paper || got.PaperCells != want.PaperCells ||
			got.NA != want.NA || got.NB != want.NB || got.NA2 != want.NA2 || got.NB2 != want.NB2 ||
			got.Effect != want.Effect || got.P != want.P || got.Test != want.Test {
			t.Errorf("claim row %d:\n got %+v\nwant %+v", i, got, want)
		}
	}

	path, err := Write(root, s, &Options{Now: fixtureNow})
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	all, err := outline(bytes.NewReader(b), dir)
	if err != nil {
		t.Fatalf("outline: %v", err)
	}
	// The claims section: from its opening line to the next line as
	// little indented.
	lines := strings.Split(all, "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `section id="claims"`) })
	if start < 0 {
		t.Fatalf("the page has no claims section:\n%s", all)
	}
	indent := len(lines[start]) - len(strings.TrimLeft(lines[start], " "))
	end := start + 1
	for end < len(lines) && len(lines[end])-len(strings.TrimLeft(lines[end], " ")) > indent {
		end++
	}
	checkGolden(t, "interaction", strings.Join(lines[start:end], "\n")+"\n")
}

func TestExpectText(t *testing.T) {
	t.Parallel()
	b := map[string]string{"method": "y"}
	for _, tc := range []struct {
		c    experiments.Claim
		want string
	}{
		{experiments.Claim{Expect: "greater", B: b}, "A > B"},
		{experiments.Claim{Expect: "less", B: b}, "A < B"},
		{experiments.Claim{Expect: "greater", Value: 20}, "A > 20"},
		{experiments.Claim{Expect: "less", Value: 0.5}, "A < 0.5"},
		{experiments.Claim{Expect: "value", Value: 80, Tolerance: 5}, "80 ± 5"},
	} {
		if got := expectText(tc.c); got != tc.want {
			t.Errorf("expectText(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}
