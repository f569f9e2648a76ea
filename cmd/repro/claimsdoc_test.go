// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/reports"
	"github.com/repro-dp/repro/reports/specout"
)

var updateClaims = flag.Bool("update-claims", false, "regenerate docs/claims.md from the specs and the checked-in run tables")

// claimsDocPath is the page listing every claim with its verdict.
var claimsDocPath = filepath.Join("..", "..", "docs", "claims.md")

// baselineOf returns the checked-in run table that the claims of
// experiment name are verified on (the small one, else the smoke one), or
// "" if there is none.
func baselineOf(name string) string {
	for _, scale := range []string{"small", "smoke"} {
		p := filepath.Join("..", "..", "results", "baselines", name+"-"+scale+".parquet")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// A verifyRow is one row of EXPERIMENTS.md's verify table: a spec, the
// run table its claims are verified on, and its tests by verdict.
type verifyRow struct {
	spec, table string
	counts      map[string]int
}

// claimsDoc returns docs/claims.md: every claim of every embedded spec,
// with its verdicts on the spec's checked-in run table; and the rows of
// EXPERIMENTS.md's verify table, one per spec with claims and a table.
func claimsDoc(t *testing.T) ([]byte, []verifyRow) {
	t.Helper()
	var rows []verifyRow
	infos, err := experiments.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString(`# Claims and their verdicts

Every claim that an experiment spec states (its ` + "`claims:`" + ` key), with the verdict of
` + "`repro verify`" + ` on the run table checked in under ` + "`results/baselines/`" + ` (the small one, else
the smoke one). These tables are small: three seeds of a model trained on two cores, so
most tests are INCONCLUSIVE and a PASS or FAIL is about our small model, not the paper's.

This page is generated; do not edit it. Regenerate it after changing a claim or a
checked-in table:

	go test ./cmd/repro -run TestClaimsDoc -update-claims

Verdicts (see ` + "`repro verify --help`" + `): PASS and FAIL are significant for and against the claim
after Holm's correction over the spec's tests; CONTRADICTED is neither, but rules out the
paper's effect; INCONCLUSIVE is neither, and NOT RUN has too few distinct seeds or lacks a
column. A deterministic metric (ε, σ, parameter counts, or a claim with ` + "`test: exact`" + `) is
compared exactly, seed by seed. The effect column is what the test tests, less the value V
it is tested against: a − b for a claim with b; a − V for a claim on a alone (expect
"a > V", "a < V" or "a = V ± T"); a − b − V for "a − b = V ± T", inside the tolerance when
it lies within ±T. Intervals are percentile bootstrap intervals of the effect at 95%, over
seeds (the checked-in tables hold no predictions). An interaction claim (its
expect reads "(a − b | x1) > (a − b | x2)") compares gains: its "ours" and "paper"
columns are the gains a − b at x1 and at x2, and its effect is their difference.

CONTRADICTED compares our effect with the paper's in the paper's units. Where the scales
differ (the perplexity of another model on another corpus, a DPZO that collapses in the
paper and not here) it says that the paper's effect size is not reproduced by our small
model, not that the paper's direction is wrong; the "paper a / b" column shows both.

`)
	total := map[string]int{}
	for _, info := range infos {
		s, err := experiments.Load(info.Name, nil)
		if err != nil {
			t.Fatal(err)
		}
		claims := specout.ClaimsOf(s)
		if len(claims) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", s.Name, strings.TrimSpace(s.Description))
		table := baselineOf(s.Name)
		var v *reports.Verification
		if table == "" {
			b.WriteString("No checked-in run table: not verified here.\n\n")
		} else {
			runs, err := readRuns(table)
			if err != nil {
				t.Fatal(err)
			}
			if v, err = reports.Verify(runs, claims, nil); err != nil {
				t.Fatal(err)
			}
			family := fmt.Sprintf("%d tests in the Holm family", v.Tests)
			if v.GateTests > 0 || v.GateFailed {
				family = "Holm families: " + v.FamilyText()
			}
			fmt.Fprintf(&b, "Run table `%s` (%d runs), %s.\n\n",
				strings.TrimPrefix(filepath.ToSlash(table), "../../"), runs.Len(), family)
			row := verifyRow{spec: s.Name, table: filepath.Base(table), counts: map[string]int{}}
			for _, ch := range v.Checks {
				row.counts[ch.Verdict]++
			}
			rows = append(rows, row)
		}
		b.WriteString("| claim | what it says | at | metric | expect | ours a / b | effect [95% CI] | paper a / b | p Holm | verdict |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
		cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
		for _, c := range claims {
			text := cell(c.Text)
			if c.Required {
				text += " (required)"
			}
			if v == nil {
				fmt.Fprintf(&b, "| %s | %s | — | %s | — | — | — | — | — | no table |\n", c.Name, text, c.Metric)
				total["no table"]++
				continue
			}
			for _, ch := range v.Checks {
				if ch.Claim != c.Name {
					continue
				}
				effect, verdict := "—", ch.Verdict
				if ch.Verdict != reports.NotRun {
					e, lo, hi := ch.Effect()
					effect = fmt.Sprintf("%+.2f [%s, %s]", e, num(lo), num(hi))
				} else {
					verdict += ": " + ch.Reason
				}
				if ch.Verdict == reports.Contradicted {
					verdict += " (p of reaching the paper's effect, Holm: " + pDoc(ch.PContra) + ")"
				}
				if ch.Note != "" {
					verdict += " (" + ch.Note + ")"
				}
				paper := "—"
				if !math.IsNaN(ch.PaperA) {
					paper = num(ch.PaperA)
					if !math.IsNaN(ch.PaperB) {
						paper += " / " + num(ch.PaperB)
					}
				}
				ours := pairDoc(ch.MeanA, ch.MeanB)
				if ch.X1 != "" {
					ours, paper = ch.OursText(), ch.PaperText()
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Name, text, orDashDoc(ch.At), ch.Metric,
					cell(ch.Expect), ours, effect, paper, pDoc(ch.PHolm), cell(verdict))
				total[ch.Verdict]++
				text = "〃"
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "In all: %d PASS, %d FAIL, %d CONTRADICTED, %d INCONCLUSIVE, %d NOT RUN; %d claims without a checked-in table.\n",
		total[reports.Pass], total[reports.Fail], total[reports.Contradicted], total[reports.Inconclusive], total[reports.NotRun], total["no table"])
	return b.Bytes(), rows
}

// experimentsPath is the user's index, whose verify section holds the
// table of verdicts by spec.
var experimentsPath = filepath.Join("..", "..", "EXPERIMENTS.md")

// verifyTableHead is the header line of EXPERIMENTS.md's verify table.
const verifyTableHead = "| spec | run table | PASS | FAIL | CONTRADICTED | INCONCLUSIVE | NOT RUN |"

// verifyTable returns EXPERIMENTS.md's verify table of rows, from its
// header line to its "all" row, each line ending in a newline.
func verifyTable(rows []verifyRow) string {
	var b strings.Builder
	b.WriteString(verifyTableHead + "\n| --- | --- | --- | --- | --- | --- | --- |\n")
	verdicts := []string{reports.Pass, reports.Fail, reports.Contradicted, reports.Inconclusive, reports.NotRun}
	total := map[string]int{}
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | `%s` |", r.spec, r.table)
		for _, vd := range verdicts {
			fmt.Fprintf(&b, " %d |", r.counts[vd])
			total[vd] += r.counts[vd]
		}
		b.WriteString("\n")
	}
	b.WriteString("| all | |")
	for _, vd := range verdicts {
		fmt.Fprintf(&b, " **%d** |", total[vd])
	}
	b.WriteString("\n")
	return b.String()
}

// replaceVerifyTable returns the text of EXPERIMENTS.md with its verify
// table replaced by table, or an error if it has no such table.
func replaceVerifyTable(doc, table string) (string, error) {
	i := strings.Index(doc, verifyTableHead+"\n")
	if i < 0 {
		return "", fmt.Errorf("no line %q", verifyTableHead)
	}
	j := strings.Index(doc[i:], "\n| all | |")
	if j < 0 {
		return "", fmt.Errorf("no \"| all | |\" row after %q", verifyTableHead)
	}
	j += i + 1
	k := strings.IndexByte(doc[j:], '\n')
	if k < 0 {
		return "", fmt.Errorf("the \"| all | |\" row does not end in a newline")
	}
	return doc[:i] + table + doc[j+k+1:], nil
}

func num(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.2f", x)
}

func pairDoc(a, b float64) string {
	if math.IsNaN(b) {
		return num(a)
	}
	return num(a) + " / " + num(b)
}

func pDoc(p float64) string {
	switch {
	case math.IsNaN(p):
		return "—"
	case p < 1e-4:
		return "<1e-4"
	}
	return fmt.Sprintf("%.4f", p)
}

func orDashDoc(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// TestClaimsDoc checks that docs/claims.md lists every claim of every
// spec; with -update-claims it regenerates the page.
func TestClaimsDoc(t *testing.T) {
	if testing.Short() && !*updateClaims {
		t.Skip("verifies every checked-in table")
	}
	got, rows := claimsDoc(t)
	index, err := os.ReadFile(experimentsPath)
	if err != nil {
		t.Fatal(err)
	}
	newIndex, err := replaceVerifyTable(string(index), verifyTable(rows))
	if err != nil {
		t.Fatalf("%s: %v", experimentsPath, err)
	}
	if *updateClaims {
		if err := os.MkdirAll(filepath.Dir(claimsDocPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(claimsDocPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(experimentsPath, []byte(newIndex), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	// The verify table of EXPERIMENTS.md holds the verdicts of the
	// checked-in tables as they are.
	if newIndex != string(index) {
		t.Errorf("the verify table of %s differs from the verdicts on the checked-in tables; regenerate it: go test ./cmd/repro -run TestClaimsDoc -update-claims\nwant:\n%s", experimentsPath, verifyTable(rows))
	}
	have, err := os.ReadFile(claimsDocPath)
	if err != nil {
		t.Fatalf("%v (regenerate it: go test ./cmd/repro -run TestClaimsDoc -update-claims)", err)
	}
	infos, err := experiments.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		s, _ := experiments.Load(info.Name, nil)
		for _, c := range s.Claims {
			if !bytes.Contains(have, []byte("| "+c.Name+" |")) {
				t.Errorf("%s does not list claim %s of %s; regenerate it: go test ./cmd/repro -run TestClaimsDoc -update-claims", claimsDocPath, c.Name, s.Name)
			}
		}
	}
}
