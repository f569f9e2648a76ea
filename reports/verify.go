// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package reports

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"
)

// A Claim is a paper's claim stated as a comparison over a run table: the
// effect of Metric between the runs that A and B select, one test per
// distinct value of the Each columns. It mirrors the claims of an
// experiment spec (package experiments); see [Verify].
type Claim struct {
	Name, Text, Metric string
	// A and B select the runs of each side (run column → value, matched
	// as a table's Where is; NoValue keeps the runs without a value in
	// that column, and a numeric column also takes a closed range "lo..hi",
	// so {method: fedavg, seed: "9..32"} is a trial's seeds). B is nil for
	// a claim about A alone.
	A, B map[string]string
	Each []string
	// X1 and X2, when given (both, with B), make the claim an interaction,
	// a difference of differences: the effect is (mean(A) − mean(B)) over
	// the runs X1 also selects minus the same over the runs X2 selects
	// ("the gain of A over B is larger at X1 than at X2"). They name the
	// same columns, none of them in A, B or Each. See interaction.go.
	X1, X2 map[string]string
	// Expect is "greater" (mean(A) − mean(B) > 0; without B, mean(A) >
	// Value, tested by the one-sample test), "less", or "value": the
	// effect (the mean of A when B is nil) lies in Value ± Tolerance.
	Expect           string
	Value, Tolerance float64
	// MinEffect, if not 0, is the effect at which the power of a test
	// without a paper value is computed.
	MinEffect float64
	// MinSeeds is the fewest distinct seeds with the metric each side
	// needs (runs, in a table without seeds); 0 means 2.
	MinSeeds int
	// Test is "auto" (exact for a metric of DeterministicMetrics, else
	// paired by seed when both sides have the same seeds, else Welch),
	// "paired", "welch" or "exact" (the values compared as they are,
	// seed by seed: a deterministic metric); "" means auto.
	Test string
	// Scale is "" (the metric as it is) or "log": the claim compares the
	// natural log of the metric, so the effect is the log of the ratio
	// A/B and the paper's values give the paper's ratio. A value ≤ 0 is
	// missing; the check's Note (its Reason when NOT RUN) counts them per
	// side and the seed pairs they remove.
	Scale string
	// Premise names claims that must PASS (every check) for this one to
	// be judged; when one does not, the claim's checks are NOT RUN with
	// the Reason "premise X not met (VERDICT)".
	Premise []string
	// Gate makes the claim a gatekeeper of the spec's other claims (a
	// serial gatekeeping order): the tests of the gate claims form the
	// first family, tested by Holm's method at the full α among
	// themselves; the tests of every other claim form the second, tested
	// (Holm among themselves, at the full α) only when every check of
	// every gate claim PASSes, and otherwise NOT RUN with the Reason
	// "not tested: gate failed (…)". Without a gate claim all tests form
	// one Holm family. See [Verify].
	Gate     bool
	Required bool
	Source   string
	Paper    []PaperValue
}

// A PaperValue is the paper's number for the test of a claim at At (values
// of the claim's Each columns). B is NaN for a claim without B. A2 and B2
// are the values at X2 of an interaction claim (A and B are at X1); NaN
// otherwise.
type PaperValue struct {
	At     map[string]string
	A, B   float64
	A2, B2 float64
}

// Verdicts of a check.
const (
	Pass = "PASS"
	Fail = "FAIL"
	// Contradicted: not significant in either direction, but the
	// paper's effect is ruled out: our effect is significantly smaller
	// than the paper's in the claimed direction (a one-sided test
	// against the paper's effect, Holm-adjusted over those tests).
	Contradicted = "CONTRADICTED"
	Inconclusive = "INCONCLUSIVE"
	NotRun       = "NOT RUN"
)

// DeterministicMetrics are the run-table metrics that depend on the
// configuration (and the run's seed) alone, not on the noise of
// training: accounting and sizes. A claim on one of them with test auto
// is compared exactly.
var DeterministicMetrics = []string{"epsilon", "epsilon_rdp", "epsilon_pld", "epsilon_tight", "epsilon_nominal",
	"sigma_nominal", "sigma_eff", "trainable_params", "rapft_analysis_peak_bytes"}

// A Check is the result of one test of a claim. Missing numbers are NaN
// (null in JSON).
type Check struct {
	Claim string
	// At names the Each values of the test ("ε=1 fashion-vqa"); "" for a
	// claim without Each.
	At       string
	Metric   string
	Expect   string
	Verdict  string
	Required bool
	// Gate marks a check of a gate claim (see [Claim.Gate]).
	Gate bool
	// Reason says why a test was NOT RUN.
	Reason string
	// NA and NB are the runs with the metric on each side; MeanA and
	// MeanB their means (MeanB NaN without B).
	NA, NB       int
	MeanA, MeanB float64
	// X1 and X2 name the two points of an interaction claim ("" for any
	// other): then NA, NB, MeanA and MeanB are at X1, and NA2, NB2,
	// MeanA2 and MeanB2 at X2, and the effect is (a − b)|X1 − (a − b)|X2.
	X1, X2         string
	NA2, NB2       int
	MeanA2, MeanB2 float64
	// Test is the t-test of the effect; Lo and Hi the percentile
	// bootstrap interval of the effect at level 1−α. The effect is the
	// tested quantity itself: mean(A) for a claim without B, a − b for a
	// claim with B, the difference of gains of an interaction; reports
	// show it less Ref (see [Check.Effect]).
	Test   TTest
	Lo, Hi float64
	// Ref is the value the claim tests its effect against: the claim's
	// Value for a claim without B (mean(A) > V, < V or in V ± T) and
	// for a value claim (a − b in V ± T), 0 for a greater or less claim
	// with B. [Check.Effect] is measured from it.
	Ref float64
	// P is the test's p-value (two-sided for greater and less; for a
	// value claim twice the smaller of the equivalence p and the
	// outside p), PHolm the Holm-adjusted p-value over every test run;
	// NaN for an exact comparison, which is no test.
	P, PHolm float64
	// PContra is the one-sided p-value of "our effect is at least the
	// paper's" (in the claimed direction), Holm-adjusted over the
	// checks that have a paper effect: small when the paper's effect is
	// ruled out. NaN when there is no paper effect.
	PContra float64
	// Note says how a test was adapted: an exact comparison, or a
	// sign or permutation test where the seeds show no variance.
	Note string
	// Power is the probability that the test, at the Holm level of its
	// rank, finds the paper's effect (or the claim's MinEffect) in the
	// claimed direction; NaN when there is none or for value claims.
	Power float64
	// PaperA and PaperB are the paper's values (NaN when not given);
	// PaperA2 and PaperB2 its values at X2 of an interaction.
	PaperA, PaperB   float64
	PaperA2, PaperB2 float64
	Source           string

	pPass, pFail float64
	oneSide      bool    // a claim without B
	effectAt     float64 // the effect the power is computed at (NaN: none)
	pContra      float64 // PContra before adjustment
	exact        bool    // compared exactly: no test
	untested     bool    // behind a gate that failed: not tested
	degenerate   *degenerate
}

// Effect returns the effect of c as reports show it, what its test
// tests, measured from the value it is tested against: the test's effect
// less Ref, and the interval [Lo − Ref, Hi − Ref]. So a claim with B
// shows a − b (paired: the mean difference over shared seeds), a claim
// without B shows mean(A) − V, a value claim a − b − V (inside the
// tolerance when within ±T), an interaction the difference of its gains
// (less V for a value claim). NaN for a check that ran no test.
func (c Check) Effect() (effect, lo, hi float64) {
	if c.Test.Kind == "" {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return c.Test.Effect - c.Ref, c.Lo - c.Ref, c.Hi - c.Ref
}

// PaperEffect returns the paper's effect on the scale of [Check.Effect]:
// its a − b (or a alone, without B; the difference of its gains for an
// interaction) less Ref; NaN when the paper gives no value.
func (c Check) PaperEffect() float64 {
	switch {
	case c.X1 != "":
		return (c.PaperA - c.PaperB) - (c.PaperA2 - c.PaperB2) - c.Ref
	case c.oneSide:
		return c.PaperA - c.Ref
	}
	return c.PaperA - c.PaperB - c.Ref
}

// MarshalJSON implements json.Marshaler: NaN numbers are null. The
// effect, ci_lo and ci_hi are [Check.Effect]'s, measured from
// effect_from (Ref).
func (c Check) MarshalJSON() ([]byte, error) {
	num := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	n2 := func(n int) *int {
		if c.X1 == "" {
			return nil
		}
		return &n
	}
	type test struct {
		Kind   string   `json:"kind"`
		Effect *float64 `json:"effect"`
		SE     *float64 `json:"se"`
		DF     *float64 `json:"df"`
	}
	var t *test
	effect, lo, hi := c.Effect()
	if c.Test.Kind != "" {
		t = &test{Kind: c.Test.Kind, Effect: num(effect), SE: num(c.Test.SE), DF: num(c.Test.DF)}
	}
	return json.Marshal(struct {
		Claim    string   `json:"claim"`
		At       string   `json:"at"`
		Metric   string   `json:"metric"`
		Expect   string   `json:"expect"`
		Verdict  string   `json:"verdict"`
		Required bool     `json:"required"`
		Gate     bool     `json:"gate,omitempty"`
		Reason   string   `json:"reason,omitempty"`
		NA       int      `json:"n_a"`
		NB       int      `json:"n_b"`
		MeanA    *float64 `json:"mean_a"`
		MeanB    *float64 `json:"mean_b"`
		Test     *test    `json:"test"`
		From     float64  `json:"effect_from"`
		Lo       *float64 `json:"ci_lo"`
		Hi       *float64 `json:"ci_hi"`
		P        *float64 `json:"p"`
		PHolm    *float64 `json:"p_holm"`
		Power    *float64 `json:"power"`
		PContra  *float64 `json:"p_contradicted,omitempty"`
		Note     string   `json:"note,omitempty"`
		PaperA   *float64 `json:"paper_a"`
		PaperB   *float64 `json:"paper_b"`
		Source   string   `json:"source"`
		X1       string   `json:"x1,omitempty"`
		X2       string   `json:"x2,omitempty"`
		NA2      *int     `json:"n_a2,omitempty"`
		NB2      *int     `json:"n_b2,omitempty"`
		MeanA2   *float64 `json:"mean_a2,omitempty"`
		MeanB2   *float64 `json:"mean_b2,omitempty"`
		PaperA2  *float64 `json:"paper_a2,omitempty"`
		PaperB2  *float64 `json:"paper_b2,omitempty"`
	}{c.Claim, c.At, c.Metric, c.Expect, c.Verdict, c.Required, c.Gate, c.Reason, c.NA, c.NB,
		num(c.MeanA), num(c.MeanB), t, c.Ref, num(lo), num(hi), num(c.P), num(c.PHolm),
		num(c.Power), num(c.PContra), c.Note, num(c.PaperA), num(c.PaperB), c.Source,
		c.X1, c.X2, n2(c.NA2), n2(c.NB2), num(c.MeanA2), num(c.MeanB2), num(c.PaperA2), num(c.PaperB2)})
}

// A Verification is the result of [Verify].
type Verification struct {
	// Alpha is the family-wise error rate of the Holm correction.
	Alpha  float64 `json:"alpha"`
	Checks []Check `json:"checks"`
	// Tests is the number of tests run, the family of the Holm correction
	// (with a gate, both families: the gate's and the tests behind it,
	// tested or not).
	Tests int `json:"tests"`
	// Unmet is how many of the Tests were then set NOT RUN because a
	// premise of their claim was not met; they stay in the family.
	Unmet int `json:"unmet_premise_tests,omitempty"`
	// GateTests is how many of the Tests are a gate claim's (0 without a
	// gate claim: one family), and GateFailed whether a gate check did
	// not PASS, so that the Tests − GateTests behind it were not tested.
	GateTests  int  `json:"gate_tests,omitempty"`
	GateFailed bool `json:"gate_failed,omitempty"`
}

// FamilyText describes the Holm family of v in words: "the 15 tests run",
// or "the 15 tests run (10 of them then NOT RUN for a premise not met)";
// with a gate, "the 1 gate test, then the 14 tests behind it (…)", or
// "the 1 gate test; the gate failed, so the 14 tests behind it were not
// tested".
func (v *Verification) FamilyText() string {
	unmet := ""
	if v.Unmet > 0 {
		unmet = fmt.Sprintf(" (%d of them then NOT RUN for a premise not met)", v.Unmet)
	}
	if v.GateTests == 0 && !v.GateFailed {
		return fmt.Sprintf("the %d tests run", v.Tests) + unmet
	}
	gate := fmt.Sprintf("the %d gate %s", v.GateTests, plural(v.GateTests, "test", "tests"))
	behind := v.Tests - v.GateTests
	if v.GateFailed {
		failed := "; the gate failed"
		if v.GateTests == 0 {
			gate, failed = "no gate test", " (the gate was NOT RUN)"
		}
		return fmt.Sprintf("%s%s, so the %d %s behind it %s not tested", gate, failed, behind, plural(behind, "test", "tests"), plural(behind, "was", "were"))
	}
	return fmt.Sprintf("%s, then (the gate passed) the %d %s behind it, a family of their own", gate, behind, plural(behind, "test", "tests")) + unmet
}

// VerifyOptions configures [Verify]; a nil *VerifyOptions means the zero
// value.
type VerifyOptions struct {
	// Alpha is the family-wise error rate; 0 means 0.05.
	Alpha float64
	// Resamples is the number of bootstrap resamples; 0 means 10000.
	Resamples int
	// RunDirs is the folder holding the runs' folders (results/EXP/runs)
	// whose predictions.parquet the intervals of the metrics of
	// ExampleMetrics resample, over seeds and then examples; "" means
	// none (intervals over seeds).
	RunDirs string
}

// Verify evaluates claims over runs. Each test of a claim compares the
// runs (status ok, metric not NaN) of its two sides: by a paired t-test
// on the seeds both sides share when Test is paired, or auto and both
// sides have the same seeds, else by Welch's t-test (a one-sample t-test
// without B). The p-values of all the tests run are adjusted together by
// Holm's method, and a test's verdict is PASS when its adjusted p is at
// most α and the effect is on the claimed side (inside the tolerance, for
// a value claim), FAIL when it is at most α and on the other side,
// INCONCLUSIVE otherwise (with the power it had), and NOT RUN when a side
// has fewer than MinSeeds runs with the metric. An interaction claim (X1
// and X2) tests the difference of the gains A − B at X1 and at X2 in the
// same way, paired per seed when its four cells share seeds (see
// interaction.go). A claim whose Premise claims do not all PASS is then
// set NOT RUN; its tests still count in the Holm family (judged first,
// so a premise never makes another verdict less conservative) and are
// counted in Unmet.
//
// Gate claims (Claim.Gate) set a serial gatekeeping order: their tests
// are tested first, by Holm's method at the full α among themselves, and
// the tests of the other claims, Holm among themselves at the full α,
// only when every gate check PASSes; otherwise those are NOT RUN with the
// Reason "not tested: gate failed (…)" (exact comparisons, no tests, are
// judged as always). Since no test behind the gate can reject unless
// every gate hypothesis is rejected, this is a closed testing procedure
// and controls the family-wise error rate at α over both families. A
// gate claim's premises must be gate claims. Bootstrap resamples are
// drawn from a stream seeded by the claim's name and the test's values,
// so a verification is reproducible. It is an error only if a claim is
// malformed (an unknown Expect or Test, a premise that names no claim or
// premises in a cycle).
//
// References:
//   - S. Holm, "A simple sequentially rejective multiple test procedure",
//     Scandinavian Journal of Statistics 6(2), 1979.
//   - D. J. Schuirmann, "A comparison of the two one-sided tests procedure
//     and the power approach for assessing the equivalence of average
//     bioavailability", Journal of Pharmacokinetics and Biopharmaceutics
//     15(6), 1987 (the equivalence test of value claims).
//   - A. Dmitrienko, A. C. Tamhane, B. L. Wiens, "General multistage
//     gatekeeping procedures", Biometrical Journal 50(5), 2008, and
//     F. Bretz, W. Maurer, W. Brannath, M. Posch, "A graphical approach
//     to sequentially rejective multiple test procedures", Statistics in
//     Medicine 28(4), 2009 (serial gatekeeping: a family tested only when
//     every hypothesis of the one before is rejected).
func Verify(runs *Runs, claims []Claim, opts *VerifyOptions) (*Verification, error) {
	o := VerifyOptions{}
	if opts != nil {
		o = *opts
	}
	var err error
	if o.Alpha, o.Resamples, err = testSettings("verify", o.Alpha, o.Resamples); err != nil {
		return nil, err
	}
	v := &Verification{Alpha: o.Alpha}
	if err := checkPremises(claims); err != nil {
		return nil, err
	}
	for _, c := range claims {
		checks, err := claimChecks(runs, c, o)
		if err != nil {
			return nil, err
		}
		v.Checks = append(v.Checks, checks...)
	}
	v.judge()
	v.premises(claims)
	return v, nil
}

// checkPremises returns an error when a claim's premise names no claim of
// claims, or premises form a cycle.
func checkPremises(claims []Claim) error {
	byName := make(map[string]Claim, len(claims))
	for _, c := range claims {
		byName[c.Name] = c
	}
	state := make(map[string]int) // 1 on the path, 2 done
	var visit func(c Claim) error
	visit = func(c Claim) error {
		switch state[c.Name] {
		case 1:
			return fmt.Errorf("reports: claim %s: premises form a cycle", c.Name)
		case 2:
			return nil
		}
		state[c.Name] = 1
		for _, p := range c.Premise {
			pc, ok := byName[p]
			if !ok {
				return fmt.Errorf("reports: claim %s: premise %q is no claim", c.Name, p)
			}
			if c.Gate && !pc.Gate {
				return fmt.Errorf("reports: gate claim %s: premise %q is behind the gate (a gate claim's premises must be gate claims)", c.Name, p)
			}
			if err := visit(pc); err != nil {
				return err
			}
		}
		state[c.Name] = 2
		return nil
	}
	for _, c := range claims {
		if err := visit(c); err != nil {
			return err
		}
	}
	return nil
}

// premises sets to NOT RUN the checks of every claim whose premise did
// not PASS, in order of the premises (a claim NOT RUN for its premise is
// itself a premise not met). The verdicts are judged first over the whole
// family, so the tests of a claim NOT RUN for its premise still count in
// the Holm correction of the others: a premise never makes another
// verdict less conservative. The check keeps its means and loses its
// p-values, interval and power.
func (v *Verification) premises(claims []Claim) {
	byName := make(map[string]Claim, len(claims))
	for _, c := range claims {
		byName[c.Name] = c
	}
	verdict := make(map[string]string) // the claim's verdict: PASS or the first other
	var judged func(name string) string
	judged = func(name string) string {
		if vd, ok := verdict[name]; ok {
			return vd
		}
		c := byName[name]
		reason := ""
		for _, p := range c.Premise {
			if pv := judged(p); pv != Pass {
				reason = fmt.Sprintf("premise %s not met (%s)", p, pv)
				break
			}
		}
		vd := Pass
		for i := range v.Checks {
			ch := &v.Checks[i]
			if ch.Claim != name {
				continue
			}
			if reason != "" && !ch.untested {
				if ch.Verdict != NotRun && !ch.exact {
					v.Unmet++
				}
				ch.Verdict, ch.Reason = NotRun, reason
				ch.P, ch.PHolm, ch.PContra, ch.Power = math.NaN(), math.NaN(), math.NaN(), math.NaN()
				ch.Lo, ch.Hi = math.NaN(), math.NaN()
			}
			if vd == Pass && ch.Verdict != Pass {
				vd = ch.Verdict
			}
		}
		verdict[name] = vd
		return vd
	}
	for _, c := range claims {
		judged(c.Name)
	}
}

// judge adjusts the p-values of the checks that ran and sets the verdicts.
// Exact comparisons are no tests: they are judged by their values and
// stay out of the Holm family. The tests against the paper's effect
// (CONTRADICTED) are a second family, adjusted by Holm's method apart.
//
// With gate claims (serial gatekeeping): the gate claims' tests are one
// Holm family at the full α; the other tests are a family of their own,
// adjusted and judged only when every gate check PASSes (a gate test not
// run, inconclusive or failed closes the gate), and otherwise set NOT RUN
// as not tested.
func (v *Verification) judge() {
	var gate, rest []int
	gated := false
	for i, c := range v.Checks {
		gated = gated || c.Gate
		if c.Verdict == NotRun || c.exact {
			continue
		}
		if c.Gate {
			gate = append(gate, i)
		} else {
			rest = append(rest, i)
		}
	}
	v.Tests = len(gate) + len(rest)
	tested := slices.Concat(gate, rest)
	if gated {
		v.GateTests = len(gate)
		v.holmFamily(gate)
		closed := slices.IndexFunc(v.Checks, func(c Check) bool { return c.Gate && c.Verdict != Pass })
		if closed >= 0 {
			v.GateFailed = true
			g := v.Checks[closed]
			reason := fmt.Sprintf("not tested: gate failed (%s %s)", strings.TrimSpace(g.Claim+" "+g.At), g.Verdict)
			for _, i := range rest {
				c := &v.Checks[i]
				c.Verdict, c.Reason, c.Note, c.untested = NotRun, reason, "", true
				c.P, c.PContra, c.Lo, c.Hi = math.NaN(), math.NaN(), math.NaN(), math.NaN()
			}
			tested = gate
			rest = nil
		}
	}
	v.holmFamily(rest)
	var contra []int
	var pcs []float64
	for _, i := range tested {
		if c := v.Checks[i]; !math.IsNaN(c.pContra) {
			contra = append(contra, i)
			pcs = append(pcs, c.pContra)
		}
	}
	for j, adj := range holm(pcs) {
		c := &v.Checks[contra[j]]
		c.PContra = adj
		if c.Verdict == Inconclusive && adj <= v.Alpha {
			c.Verdict = Contradicted
		}
	}
}

// holmFamily adjusts the p-values of the checks idx together by Holm's
// method at v.Alpha and sets their verdicts and powers.
func (v *Verification) holmFamily(idx []int) {
	ps := make([]float64, len(idx))
	for j, i := range idx {
		ps[j] = v.Checks[i].P
	}
	adj, levels := holm(ps), holmLevels(ps, v.Alpha)
	for j, i := range idx {
		c := &v.Checks[i]
		c.PHolm = adj[j]
		switch {
		case c.PHolm <= v.Alpha && c.pPass < c.pFail:
			c.Verdict = Pass
		case c.PHolm <= v.Alpha:
			c.Verdict = Fail
		default:
			c.Verdict = Inconclusive
		}
		if !math.IsNaN(c.effectAt) && c.degenerate == nil {
			c.Power = c.Test.power(c.effectAt, levels[j])
		}
	}
}

// claimChecks returns the checks of claim c, one per value of its Each
// columns, their p-values not yet adjusted.
func claimChecks(runs *Runs, c Claim, o VerifyOptions) ([]Check, error) {
	if !slices.Contains([]string{"greater", "less", "value"}, c.Expect) {
		return nil, fmt.Errorf("reports: claim %s: unknown expect %q", c.Name, c.Expect)
	}
	if !slices.Contains([]string{"", "auto", "paired", "welch", "exact"}, c.Test) {
		return nil, fmt.Errorf("reports: claim %s: unknown test %q", c.Name, c.Test)
	}
	if c.Scale != "" && c.Scale != "log" {
		return nil, fmt.Errorf("reports: claim %s: unknown scale %q", c.Name, c.Scale)
	}
	inter, err := c.interaction()
	if err != nil {
		return nil, err
	}
	notRun := func(at, reason string) []Check {
		ch := newCheck(c, at)
		ch.Verdict, ch.Reason = NotRun, reason
		return []Check{ch}
	}
	for _, col := range slices.Concat(slices.Collect(maps.Keys(c.A)), slices.Collect(maps.Keys(c.B)), slices.Collect(maps.Keys(c.X1)), c.Each, []string{c.Metric}) {
		if _, ok := runs.Column(col); !ok {
			return notRun("", fmt.Sprintf("the run table has no column %s", col)), nil
		}
	}
	if mc, _ := runs.Column(c.Metric); mc.Kind != Float {
		return notRun("", fmt.Sprintf("column %s is not numeric", c.Metric)), nil
	}
	orig := runs
	if c.Scale == "log" {
		runs = runs.withLog(c.Metric)
	}
	if inter {
		return interactionChecks(orig, runs, c, o), nil
	}
	selA, _ := selectRuns(runs, c.A)
	var selB []int
	if c.B != nil {
		selB, _ = selectRuns(runs, c.B)
	}
	union := slices.Compact(slices.Sorted(slices.Values(slices.Concat(selA, selB))))
	if len(union) == 0 {
		return notRun("", "no run matches a or b"), nil
	}
	k, _ := newKeyer(runs, "each", c.Each)
	gs, _ := k.groups(union)
	var out []Check
	for _, g := range gs {
		at := strings.Join(k.header(nil, g.first), " ")
		ch := newCheck(c, at)
		in := func(sel []int) []int { return intersect(sel, g.runs) }
		ch.evaluate(runs, c, in(selA), in(selB), o, seedOf(c.Name, at))
		ch.paper(runs, k, g.first, c)
		if c.Scale == "log" {
			ch.logLoss(orig, runs, c, [][]int{in(selA), in(selB)}, []string{"a", "b"})
		}
		if c.Scale == "log" && c.B != nil && !math.IsNaN(ch.MeanA-ch.MeanB) {
			ratio := fmt.Sprintf("log scale: ratio a/b %s", fmtNum(math.Exp(ch.MeanA-ch.MeanB)))
			if r := math.Exp(ch.PaperA - ch.PaperB); !math.IsNaN(r) {
				ratio += ", the paper's " + fmtNum(r)
			}
			ch.Note = strings.TrimPrefix(ch.Note+"; "+ratio, "; ")
		}
		out = append(out, ch)
	}
	return out, nil
}

func newCheck(c Claim, at string) Check {
	ch := Check{Claim: c.Name, At: at, Metric: c.Metric, Required: c.Required, Gate: c.Gate, Source: c.Source,
		MeanA: math.NaN(), MeanB: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(),
		PHolm: math.NaN(), Power: math.NaN(), PaperA: math.NaN(), PaperB: math.NaN(), effectAt: math.NaN(),
		PContra: math.NaN(), pContra: math.NaN(), MeanA2: math.NaN(), MeanB2: math.NaN(),
		PaperA2: math.NaN(), PaperB2: math.NaN(), Ref: c.ref(), oneSide: c.B == nil}
	if c.X1 != nil {
		ch.X1, ch.X2 = xText(c.X1), xText(c.X2)
		gain := func(x string) string { return "(a − b | " + x + ")" }
		switch c.Expect {
		case "greater":
			ch.Expect = gain(ch.X1) + " > " + gain(ch.X2)
		case "less":
			ch.Expect = gain(ch.X1) + " < " + gain(ch.X2)
		default:
			ch.Expect = fmt.Sprintf("%s − %s = %s ± %s", gain(ch.X1), gain(ch.X2), formatKeyFloat(c.Value), formatKeyFloat(c.Tolerance))
		}
		return ch
	}
	a, b := "a", "b"
	if c.Scale == "log" {
		a, b = "log a", "log b"
	}
	if c.B == nil {
		b = formatKeyFloat(c.Value) // on the claim's scale, as a value claim's
	}
	switch c.Expect {
	case "greater":
		ch.Expect = a + " > " + b
	case "less":
		ch.Expect = a + " < " + b
	default:
		what := a
		if c.B != nil {
			what = a + " − " + b
		}
		ch.Expect = fmt.Sprintf("%s = %s ± %s", what, formatKeyFloat(c.Value), formatKeyFloat(c.Tolerance))
	}
	return ch
}

// evaluate runs the test of ch on the runs a and b (b nil without B).
func (ch *Check) evaluate(runs *Runs, c Claim, a, b []int, o VerifyOptions, seed uint64) {
	va, sa := values(runs, c.Metric, a)
	vb, sb := values(runs, c.Metric, b)
	ch.NA, ch.NB = len(va), len(vb)
	ch.MeanA, _ = meanStd(va)
	if c.B != nil {
		ch.MeanB, _ = meanStd(vb)
	}
	minSeeds := max(c.MinSeeds, 2)
	switch {
	case seedCount(runs, c.Metric, a) < minSeeds:
		ch.Verdict, ch.Reason = NotRun, fmt.Sprintf("a has %d distinct seeds with %s, want ≥ %d", seedCount(runs, c.Metric, a), c.Metric, minSeeds)
		return
	case c.B != nil && seedCount(runs, c.Metric, b) < minSeeds:
		ch.Verdict, ch.Reason = NotRun, fmt.Sprintf("b has %d distinct seeds with %s, want ≥ %d", seedCount(runs, c.Metric, b), c.Metric, minSeeds)
		return
	}
	auto := c.Test == "" || c.Test == "auto"
	paired := c.Test == "paired" || ((auto || c.Test == "exact") && sa != nil && slices.Equal(sa, sb))
	if c.Test == "exact" || auto && slices.Contains(DeterministicMetrics, c.Metric) {
		ch.compareExact(runs, c, a, b, va, vb, paired)
		return
	}
	rng := rand.New(rand.NewPCG(seed, 0x766572696679))
	switch {
	case c.B == nil:
		ch.Test = oneSample(va, "one-sample")
		ch.Lo, ch.Hi = bootstrapCI(rng, va, nil, o.Alpha, o.Resamples)
		ch.degenerate = signTest(va)
	case paired:
		d := pairedDiffs(runs, c.Metric, a, b)
		if len(d) < minSeeds {
			ch.Verdict, ch.Reason = NotRun, fmt.Sprintf("a and b share %d seeds with %s, want ≥ %d for a paired test", len(d), c.Metric, minSeeds)
			return
		}
		ch.Test = oneSample(d, "paired")
		ch.Lo, ch.Hi = bootstrapCI(rng, d, nil, o.Alpha, o.Resamples)
		ch.degenerate = signTest(d)
	default:
		ch.Test = welch(va, vb)
		ch.Lo, ch.Hi = bootstrapCI(rng, va, vb, o.Alpha, o.Resamples)
		ch.degenerate = separationTest(va, vb)
	}
	if o.RunDirs != "" {
		ch.exampleInterval(runs, c, a, b, paired, o)
	}
	if ch.degenerate != nil {
		ch.Note = ch.degenerate.note(c, o.Alpha)
	}
	ch.setP(c)
}

// bound returns the value the effect of claim c is compared with by a
// greater or less claim: Value for a claim without B (mean(A) against a
// number), else 0.
func (c Claim) bound() float64 {
	if c.B == nil && c.X1 == nil {
		return c.Value
	}
	return 0
}

// ref returns the value the effect of claim c is tested against (see
// Check.Ref): Value for a value claim, else the bound of a greater or
// less claim.
func (c Claim) ref() float64 {
	if c.Expect == "value" {
		return c.Value
	}
	return c.bound()
}

// setP sets the one-sided p-values of ch for and against its claim c, and
// the two-sided P, from its test.
func (ch *Check) setP(c Claim) {
	switch c.Expect {
	case "greater":
		ch.pPass, ch.pFail = ch.pAbove(c.bound()), ch.pBelow(c.bound())
	case "less":
		ch.pPass, ch.pFail = ch.pBelow(c.bound()), ch.pAbove(c.bound())
	default:
		lo, hi := c.Value-c.Tolerance, c.Value+c.Tolerance
		// Two one-sided tests for "inside", and the smaller of the two
		// one-sided tests for "outside", Bonferroni-corrected.
		ch.pPass = math.Max(ch.pAbove(lo), ch.pBelow(hi))
		ch.pFail = math.Min(1, 2*math.Min(ch.pAbove(hi), ch.pBelow(lo)))
	}
	ch.P = math.Min(1, 2*math.Min(ch.pPass, ch.pFail))
	ch.Verdict = Inconclusive // until judged
}

// pAbove returns the one-sided p-value of "the effect is at most x": the
// t-test's, or the degenerate test's when the seeds show no variance.
func (ch *Check) pAbove(x float64) float64 {
	if ch.degenerate != nil {
		return ch.degenerate.above(x)
	}
	return ch.Test.PAbove(x)
}

// pBelow returns the one-sided p-value of "the effect is at least x".
func (ch *Check) pBelow(x float64) float64 {
	if ch.degenerate != nil {
		return ch.degenerate.below(x)
	}
	return ch.Test.PBelow(x)
}

// A degenerate is the exact test that stands in for a t-test whose
// samples have no variance (SE = 0), where the t-test would give p = 0
// from a handful of equal values: with n equal values (or differences)
// e, the sign test's one-sided p of "the effect is at most x" is 2⁻ⁿ
// when e > x, else 1; with two samples of equal values each, the
// permutation test's is 1/C(n_a+n_b, n_a) (complete separation). A noisy
// metric that happened not to vary over three seeds can so never be
// significant at 0.05, as it should not be.
//
// References:
//   - W. J. Conover, "Practical Nonparametric Statistics", 3rd ed.,
//     Wiley 1999, §3.4 (the sign test) and §5.1 (the two-sample
//     permutation test).
type degenerate struct {
	kind   string
	effect float64
	p      float64 // the smallest one-sided p
	n      int     // the values (sign) or the two samples' sizes together (permutation); 0: no exact test
}

func (d *degenerate) above(x float64) float64 {
	if d.effect > x {
		return d.p
	}
	return 1
}

func (d *degenerate) below(x float64) float64 {
	if d.effect < x {
		return d.p
	}
	return 1
}

// note says which exact test stood in for the t-test, and what it cannot
// decide. When every value (or difference) lies exactly on the claim c's
// bound, every pair is a tie: the sign test drops tied pairs (Conover
// §3.4) and none is left, so the claimed direction is undecidable from
// these seeds and from any number more that tie too; the check stays
// INCONCLUSIVE, its note saying so. Otherwise, when the test's smallest
// two-sided p is above α, it names the fewest seeds that could decide:
// n with 2·2⁻ⁿ ≤ α for the sign test (6 at α = 0.05, before Holm's
// correction).
func (d *degenerate) note(c Claim, alpha float64) string {
	if d.n > 0 && c.Expect != "value" && d.effect == c.bound() {
		what := "differences"
		if c.B == nil && c.X1 == nil {
			what = "values"
		}
		ties := fmt.Sprintf("all %d %s are exactly %s (ties: the sign test has no untied pair, with any number of such seeds)", d.n, what, formatKeyFloat(c.bound()))
		if d.kind == "permutation" {
			ties = fmt.Sprintf("both sides are one equal constant, a − b exactly %s (ties: the permutation test has no order, with any number of such seeds)", formatKeyFloat(c.bound()))
		}
		return "undecidable: " + ties
	}
	s := fmt.Sprintf("no variance over the seeds: %s test in place of the t-test", d.kind)
	if d.kind == "sign" && 2*d.p > alpha {
		s += fmt.Sprintf(" (its smallest two-sided p, 2·2⁻%d = %.3g, is above α = %g: %d such seeds are needed)",
			d.n, 2*d.p, alpha, int(math.Ceil(math.Log2(2/alpha))))
	}
	return s
}

// signTest returns the sign test of x when its values are all equal, nil
// otherwise.
func signTest(x []float64) *degenerate {
	if len(x) == 0 || slices.ContainsFunc(x, func(v float64) bool { return v != x[0] }) {
		return nil
	}
	return &degenerate{kind: "sign", effect: x[0], p: math.Pow(2, -float64(len(x))), n: len(x)}
}

// separationTest returns the permutation test of a − b when a's values
// are all equal and b's too, nil otherwise.
func separationTest(a, b []float64) *degenerate {
	if signTest(a) == nil || signTest(b) == nil {
		return nil
	}
	lc, _ := math.Lgamma(float64(len(a)+len(b)) + 1)
	la, _ := math.Lgamma(float64(len(a)) + 1)
	lb, _ := math.Lgamma(float64(len(b)) + 1)
	return &degenerate{kind: "permutation", effect: a[0] - b[0], p: math.Exp(la + lb - lc), n: len(a) + len(b)}
}

// compareExact judges a deterministic metric by its values, seed by
// seed when paired (else every value of a against every value of b, or
// each value of a for a claim without b): PASS when every comparison
// holds the claim, FAIL when none does, INCONCLUSIVE when they disagree.
// It is no test: P stays NaN and the check is out of the Holm family.
func (ch *Check) compareExact(runs *Runs, c Claim, a, b []int, va, vb []float64, paired bool) {
	var d []float64
	switch {
	case c.B == nil:
		d = va
	case paired:
		d = pairedDiffs(runs, c.Metric, a, b)
	default:
		for _, x := range va {
			for _, y := range vb {
				d = append(d, x-y)
			}
		}
	}
	ch.judgeExact(c, d, paired && c.B != nil)
}

// judgeExact judges the effects d of a deterministic metric (paired: one
// per seed): PASS when every one holds the claim c, FAIL when none does,
// INCONCLUSIVE otherwise.
func (ch *Check) judgeExact(c Claim, d []float64, paired bool) {
	ch.exact = true
	ch.Test = TTest{Kind: "exact", SE: math.NaN(), DF: math.NaN()}
	ch.Test.Effect, _ = meanStd(d)
	ch.Lo, ch.Hi = slices.Min(d), slices.Max(d)
	holds := 0
	for _, x := range d {
		switch {
		case c.Expect == "greater" && x > c.bound(), c.Expect == "less" && x < c.bound(),
			c.Expect == "value" && x >= c.Value-c.Tolerance && x <= c.Value+c.Tolerance:
			holds++
		}
	}
	what := "values"
	if paired {
		what = "seeds"
	}
	switch holds {
	case len(d):
		ch.Verdict = Pass
	case 0:
		ch.Verdict = Fail
	default:
		ch.Verdict = Inconclusive
	}
	ch.Note = fmt.Sprintf("deterministic metric compared exactly: the claim holds for %d of %d %s", holds, len(d), what)
}

// paper fills in the paper's values of the check at run first of k's
// groups, and the effect its power is computed at.
func (ch *Check) paper(runs *Runs, k *keyer, first int, c Claim) {
	for _, p := range c.Paper {
		match := true
		for col, val := range p.At {
			if j := slices.Index(k.names, col); j < 0 || !matches(k.cols[j], first, val) {
				match = false
			}
		}
		if match {
			ch.PaperA, ch.PaperB = scaled(c, p.A), scaled(c, p.B)
			if c.X1 != nil {
				ch.PaperA2, ch.PaperB2 = scaled(c, p.A2), scaled(c, p.B2)
			}
			break
		}
	}
	if ch.Verdict == NotRun || ch.exact {
		return
	}
	dir := 1.0
	switch c.Expect {
	case "less":
		dir = -1
	case "value":
		return
	}
	// An interaction's paper effect needs the gains at both x1 and x2;
	// a claim without B compares the paper's A with the bound.
	paperB := ch.PaperB
	if c.B == nil {
		paperB = c.bound()
	}
	paperEffect := !math.IsNaN(ch.PaperA) && !math.IsNaN(paperB) &&
		(c.X1 == nil || !math.IsNaN(ch.PaperA2) && !math.IsNaN(ch.PaperB2))
	switch {
	case paperEffect:
		ch.effectAt = dir * (ch.PaperA - paperB)
		if c.X1 != nil {
			ch.effectAt = dir * ((ch.PaperA - ch.PaperB) - (ch.PaperA2 - ch.PaperB2))
		}
		if !(ch.effectAt > 0) {
			// The paper's own numbers do not show the claimed direction:
			// no power at an effect of the wrong sign, nothing to rule out.
			ch.effectAt = math.NaN()
			ch.Note = strings.TrimPrefix(ch.Note+"; the paper's numbers do not show the claimed direction", "; ")
			return
		}
		if !ch.exact {
			// Our effect is at least the paper's, in the claimed direction.
			if dir > 0 {
				ch.pContra = ch.pBelow(c.bound() + ch.effectAt)
			} else {
				ch.pContra = ch.pAbove(c.bound() - ch.effectAt)
			}
		}
	case c.MinEffect != 0:
		ch.effectAt = math.Abs(c.MinEffect)
	}
}

// withLog returns a copy of r whose column metric (numeric) holds the
// natural log of its values, a non-positive value becoming missing (NaN);
// r is not changed.
func (r *Runs) withLog(metric string) *Runs {
	out := *r
	out.cols = slices.Clone(r.cols)
	c := &out.cols[r.index[metric]]
	c.Floats = slices.Clone(c.Floats)
	for i, v := range c.Floats {
		if v > 0 {
			c.Floats[i] = math.Log(v)
		} else {
			c.Floats[i] = math.NaN()
		}
	}
	return &out
}

// logLoss states in ch what the log scale of claim c left out: the
// values ≤ 0 of each side (cells, named by names) that became missing,
// and, for a claim with b, the seeds that all its cells shared before
// and no longer do, and the unpaired test that took the paired one's
// place for it. orig
// are the runs before the log, logged after. The text goes to the
// check's Reason when it was NOT RUN, else to its Note; nothing is added
// when no value was ≤ 0.
func (ch *Check) logLoss(orig, logged *Runs, c Claim, cells [][]int, names []string) {
	var parts []string
	for i, cell := range cells {
		if n := nonPositive(orig, c.Metric, cell); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s ≤ 0 on %s", n, plural(n, "value", "values"), names[i]))
		}
	}
	if len(parts) == 0 {
		return
	}
	text := "log scale: " + strings.Join(parts, ", ") + " left out as missing"
	if c.B != nil {
		pairs := func(r *Runs) int {
			if len(cells) == 4 {
				return len(interactionDiffs(r, c.Metric, [4][]int(cells)))
			}
			return len(pairedDiffs(r, c.Metric, cells[0], cells[1]))
		}
		if before, after := pairs(orig), pairs(logged); after < before {
			text += fmt.Sprintf(", which removes %d of %d shared seeds", before-after, before)
			switch ch.Test.Kind {
			case "welch":
				text += ": Welch's test in place of the paired test"
			case "contrast":
				text += ": the contrast of the cells' means in place of the paired test"
			}
		}
	}
	if ch.Verdict == NotRun {
		ch.Reason = ch.Reason + "; " + text
		return
	}
	ch.Note = strings.TrimPrefix(ch.Note+"; "+text, "; ")
}

// nonPositive returns how many of the ok runs idx have metric ≤ 0.
func nonPositive(runs *Runs, metric string, idx []int) int {
	m, _ := runs.Column(metric)
	ok, _ := okRuns(runs, idx)
	n := 0
	for _, i := range ok {
		if m.Floats[i] <= 0 {
			n++
		}
	}
	return n
}

// scaled returns the paper value x on the claim's scale: log(x) (NaN
// for x ≤ 0) for a log-scale claim, else x.
func scaled(c Claim, x float64) float64 {
	if c.Scale != "log" {
		return x
	}
	if !(x > 0) {
		return math.NaN()
	}
	return math.Log(x)
}

// values returns the values of metric over the runs idx that are ok and
// have it, and their seeds (nil if the table has no seed column, or if a
// seed repeats), sorted by seed.
func values(runs *Runs, metric string, idx []int) (vals, seeds []float64) {
	m, _ := runs.Column(metric)
	ok, _ := okRuns(runs, idx)
	seed, hasSeed := runs.Column("seed")
	hasSeed = hasSeed && seed.Kind == Float
	type vs struct{ v, s float64 }
	var xs []vs
	for _, i := range ok {
		if math.IsNaN(m.Floats[i]) {
			continue
		}
		x := vs{v: m.Floats[i], s: math.NaN()}
		if hasSeed {
			x.s = seed.Floats[i]
		}
		xs = append(xs, x)
	}
	slices.SortStableFunc(xs, func(a, b vs) int { return compareFloat(a.s, b.s) })
	for _, x := range xs {
		vals = append(vals, x.v)
		seeds = append(seeds, x.s)
	}
	if _, dup := duplicate(seeds); !hasSeed || dup || slices.ContainsFunc(seeds, math.IsNaN) {
		seeds = nil
	}
	return vals, seeds
}

// seedCount returns the number of distinct seeds among the runs idx that
// are ok and have metric, or the number of such runs if the table has no
// seed column: two runs of one seed are one observation of the seed's
// noise, not two.
func seedCount(runs *Runs, metric string, idx []int) int {
	m, _ := runs.Column(metric)
	ok, _ := okRuns(runs, idx)
	seed, hasSeed := runs.Column("seed")
	n := 0
	seen := make(map[float64]bool)
	for _, i := range ok {
		if math.IsNaN(m.Floats[i]) {
			continue
		}
		if !hasSeed || seed.Kind != Float || math.IsNaN(seed.Floats[i]) {
			n++
			continue
		}
		if !seen[seed.Floats[i]] {
			seen[seed.Floats[i]] = true
			n++
		}
	}
	return n
}

// pairedDiffs returns a − b of metric for each seed that both a and b have
// once, in seed order.
func pairedDiffs(runs *Runs, metric string, a, b []int) []float64 {
	va, sa := values(runs, metric, a)
	vb, sb := values(runs, metric, b)
	if sa == nil || sb == nil {
		return nil
	}
	var d []float64
	for i, s := range sa {
		if j := slices.Index(sb, s); j >= 0 {
			d = append(d, va[i]-vb[j])
		}
	}
	return d
}

// intersect returns the elements of the sorted sel that are in the sorted
// set.
func intersect(sel, set []int) []int {
	var out []int
	for _, i := range sel {
		if _, ok := slices.BinarySearch(set, i); ok {
			out = append(out, i)
		}
	}
	return out
}

// seedOf returns the seed of the bootstrap stream of a test.
func seedOf(claim, at string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(claim))
	h.Write([]byte{0})
	h.Write([]byte(at))
	return h.Sum64()
}

// Failed returns the required checks whose verdict is FAIL.
func (v *Verification) Failed() []Check {
	var out []Check
	for _, c := range v.Checks {
		if c.Required && c.Verdict == Fail {
			out = append(out, c)
		}
	}
	return out
}

// WriteText writes v as a terminal table, one line per test: ours (the
// means of a and b, the effect and its bootstrap interval) beside the
// paper's, the test, the p-value and its Holm adjustment, the power of an
// inconclusive test and the verdict; then the correction, the sources and
// the reasons of the tests not run.
func (v *Verification) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "claim\tat\tmetric\texpect\tours a / b\teffect [CI]\tpaper a / b (effect)\ttest\tp\tp Holm\tpower\tverdict")
	var sources []string
	var notes []string
	for _, c := range v.Checks {
		if c.Source != "" && !slices.Contains(sources, c.Source) {
			sources = append(sources, c.Source)
		}
		verdict := c.Verdict
		if c.Required {
			verdict += " (required)"
		}
		test, p, ph, power, effect := "—", "—", "—", "—", "—"
		if c.Verdict == NotRun {
			notes = append(notes, fmt.Sprintf("%s: not run: %s", strings.TrimSpace(c.Claim+" "+c.At), c.Reason))
		} else {
			test = fmt.Sprintf("%s n=%d", c.Test.Kind, c.NA)
			if c.Test.Kind == "welch" {
				test = fmt.Sprintf("welch n=%d/%d", c.NA, c.NB)
			}
			p, ph = fmtP(c.P), fmtP(c.PHolm)
			e, lo, hi := c.Effect()
			effect = fmt.Sprintf("%s [%s, %s]", fmtSigned(e), fmtNum(lo), fmtNum(hi))
			if c.Verdict == Inconclusive && !math.IsNaN(c.Power) {
				power = fmt.Sprintf("%.2f", c.Power)
			}
			if c.Verdict == Contradicted {
				power = "p≥paper " + fmtP(c.PContra)
			}
			if c.Note != "" {
				notes = append(notes, fmt.Sprintf("%s: %s", strings.TrimSpace(c.Claim+" "+c.At), c.Note))
			}
		}
		ours, paper := pair(c.MeanA, c.MeanB), paperText(c.PaperA, c.PaperB, c.PaperEffect())
		if c.X1 != "" {
			ours, paper = c.OursText(), c.PaperText()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Claim, orDash(c.At), c.Metric, c.Expect,
			ours, effect, paper, test, p, ph, power, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	counts := make(map[string]int)
	for _, c := range v.Checks {
		counts[c.Verdict]++
	}
	fmt.Fprintf(w, "\n%d PASS, %d FAIL, %d CONTRADICTED, %d INCONCLUSIVE, %d NOT RUN.\n", counts[Pass], counts[Fail], counts[Contradicted], counts[Inconclusive], counts[NotRun])
	if v.GateTests > 0 || v.GateFailed {
		fmt.Fprintf(w, "Gatekeeping order at family-wise α = %v, Holm's method within each family: %s. A test is significant when its Holm-adjusted p ≤ α.\n", v.Alpha, v.FamilyText())
	} else {
		fmt.Fprintf(w, "Holm correction over %s at family-wise α = %v: a test is significant when its Holm-adjusted p ≤ α.\n", v.FamilyText(), v.Alpha)
	}
	fmt.Fprintf(w, "effect: what the test tests, less the value V it is tested against: a − b (paired: the mean difference over shared seeds); a − V for a claim on a alone (a > V, a < V, a = V ± T); a − b − V for a − b = V ± T (inside when within ±T); with its %v%% percentile bootstrap interval (not adjusted). The paper's effect is in the same terms.\n", 100*(1-v.Alpha))
	fmt.Fprintln(w, "power: of an INCONCLUSIVE test, to find the paper's effect (or the claim's min_effect) at the Holm level of its rank.")
	fmt.Fprintln(w, "CONTRADICTED: not significant either way, but the paper's effect is ruled out: the one-sided test of \"our effect is at least the paper's\" rejects (Holm over those tests; its adjusted p in the power column).")
	if slices.ContainsFunc(v.Checks, func(c Check) bool { return c.X1 != "" }) {
		fmt.Fprintln(w, "interaction: ours and paper are the gains a − b at x1 and at x2; the effect is their difference, paired per seed when the four cells share seeds.")
	}
	fmt.Fprintln(w, "exact: a deterministic metric (accounting, sizes) compared value by value: no test, no p-value; its interval is the range of the differences.")
	for _, s := range sources {
		fmt.Fprintf(w, "source: %s\n", s)
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	return nil
}

func fmtNum(x float64) string {
	switch {
	case math.IsNaN(x):
		return "—"
	case math.IsInf(x, 0):
		return formatKeyFloat(x)
	}
	return fmt.Sprintf("%.2f", x)
}

func fmtSigned(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%+.2f", x)
}

func fmtP(p float64) string {
	switch {
	case math.IsNaN(p):
		return "—"
	case p < 1e-4:
		return "<1e-4"
	}
	return fmt.Sprintf("%.4f", p)
}

func pair(a, b float64) string {
	if math.IsNaN(b) {
		return fmtNum(a)
	}
	return fmtNum(a) + " / " + fmtNum(b)
}

// paperText formats the paper's values a and b (NaN: none) and its
// effect (see Check.PaperEffect): "a / b (effect)", or "a (effect)"
// without b.
func paperText(a, b, effect float64) string {
	switch {
	case math.IsNaN(a):
		return "—"
	case math.IsNaN(b):
		return fmt.Sprintf("%s (%s)", fmtNum(a), fmtSigned(effect))
	}
	return fmt.Sprintf("%s / %s (%s)", fmtNum(a), fmtNum(b), fmtSigned(effect))
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// testSettings returns the significance level and bootstrap resample count
// of verify or compare (what), with their defaults (0.05 and 10000) for
// zero values, or an error for values out of range.
func testSettings(what string, alpha float64, resamples int) (float64, int, error) {
	if alpha == 0 {
		alpha = 0.05
	}
	if resamples == 0 {
		resamples = 10000
	}
	if !(alpha > 0 && alpha < 1) || resamples < 100 {
		return 0, 0, fmt.Errorf("reports: %s: alpha %v must be in (0, 1) and resamples %d at least 100", what, alpha, resamples)
	}
	return alpha, resamples, nil
}

// OursText formats our side of an interaction check: the gains a − b at
// X1 and at X2 ("gain 0.57 / 0.18").
func (c Check) OursText() string {
	return "gain " + fmtNum(c.MeanA-c.MeanB) + " / " + fmtNum(c.MeanA2-c.MeanB2)
}

// PaperText formats the paper's side of an interaction check: its gains
// at X1 and at X2 and their difference (less Ref, as [Check.PaperEffect]),
// or "—".
func (c Check) PaperText() string {
	g1, g2 := c.PaperA-c.PaperB, c.PaperA2-c.PaperB2
	if math.IsNaN(g1) || math.IsNaN(g2) {
		return "—"
	}
	return fmt.Sprintf("gain %s / %s (%s)", fmtNum(g1), fmtNum(g2), fmtSigned(c.PaperEffect()))
}
