// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/privacy"
)

// iclJob returns a job of method on the smoke icl task (data seed 1) with
// a freshly initialised smoke TinyMLLM and a short REINFORCE.
func iclJob(t testing.TB, method string, eps float64, params map[string]any) *Job {
	t.Helper()
	p := map[string]any{}
	if _, ok := params["reinforce_steps"]; !ok && method != "zeroshot" && method != "fewshot" {
		p["reinforce_steps"] = 20
		p["reinforce_masks"] = 8
	}
	for k, v := range params {
		p[k] = v
	}
	job := smokeJob(t, "icl", method, 0, eps, p, 5)
	d, err := datasets.Build("icl", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	job.Data = d
	return job
}

// agmSigma is the analytic Gaussian mechanism's σ computed here, as the
// independent reference: the smallest σ with
// Φ(Δ/(2σ) − εσ/Δ) − e^ε·Φ(−Δ/(2σ) − εσ/Δ) ≤ δ (Balle & Wang, ICML 2018,
// Theorem 8), by bisection on σ/Δ with math.Erfc.
func agmSigma(eps, delta, sens float64) float64 {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	dlt := func(s float64) float64 { return phi(1/(2*s)-eps*s) - math.Exp(eps)*phi(-1/(2*s)-eps*s) }
	lo, hi := 1e-3, 1e3
	for range 200 {
		mid := (lo + hi) / 2
		if dlt(mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi * sens
}

// TestMTVRelease checks the release on synthetic head outputs: per-layer
// clipping against a slow reference, the sensitivity √|𝓛|·C/K (twice for
// replace-one), σ against the analytic Gaussian mechanism computed here
// and the published value σ/Δ = 3.731 at ε = 1, δ = 10⁻⁵ (the DP-MTV
// paper's setting; Balle & Wang's formula), and noise of that size.
func TestMTVRelease(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const K, L, D, C = 50, 3, 96, 2.0
	acts := make([][][]float32, K)
	for k := range acts {
		acts[k] = make([][]float32, L)
		for l := range acts[k] {
			acts[k][l] = make([]float32, D)
			for j := range acts[k][l] {
				acts[k][l][j] = float32(rng.NormFloat64() * 0.3 * float64(l+1))
			}
		}
	}
	want := make([][]float64, L) // the slow reference: clip each layer, then average
	for l := range want {
		want[l] = make([]float64, D)
		for k := range acts {
			var n float64
			for _, v := range acts[k][l] {
				n += float64(v) * float64(v)
			}
			s := math.Min(1, C/math.Sqrt(n))
			for j, v := range acts[k][l] {
				want[l][j] += s * float64(v) / K
			}
		}
	}
	clean, err := privateMean(acts, C, math.Inf(1), 1e-5, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	for l := range want {
		for j := range want[l] {
			if d := math.Abs(clean.Mean[l][j] - want[l][j]); d > 1e-12 {
				t.Fatalf("layer %d coordinate %d: clipped mean %v, reference %v", l, j, clean.Mean[l][j], want[l][j])
			}
		}
	}
	if clean.Sigma != 0 || clean.NoiseNorm != 0 || math.Abs(clean.Cosine-1) > 1e-12 {
		t.Errorf("ε = ∞: σ %v, noise %v, cosine %v", clean.Sigma, clean.NoiseNorm, clean.Cosine)
	}
	for _, replace := range []bool{false, true} {
		r, err := privateMean(acts, C, 1, 1e-5, replace, 1)
		if err != nil {
			t.Fatal(err)
		}
		sens := math.Sqrt(L) * C / K
		if replace {
			sens *= 2
		}
		if math.Abs(r.Sensitivity-sens) > 1e-15 {
			t.Errorf("replace %v: Δ = %v, want √|L|·C/K = %v", replace, r.Sensitivity, sens)
		}
		if ref := agmSigma(1, 1e-5, sens); math.Abs(r.Sigma-ref) > 1e-9*ref {
			t.Errorf("replace %v: σ = %.12g, the AGM computed here %.12g", replace, r.Sigma, ref)
		}
		if got := r.Sigma / sens; math.Abs(got-3.731) > 5e-4 {
			t.Errorf("σ/Δ = %v, published 3.731", got)
		}
		// ‖noise‖² ~ σ²·χ²(L·D): within 5 sd of L·D.
		n := float64(L * D)
		if z := (r.NoiseNorm*r.NoiseNorm/(r.Sigma*r.Sigma) - n) / math.Sqrt(2*n); math.Abs(z) > 5 {
			t.Errorf("noise norm %v for σ %v over %v coordinates (z = %.1f)", r.NoiseNorm, r.Sigma, n, z)
		}
	}
}

// TestMTVChunks checks the partition: the chunks are distinct private
// episodes (no canary copy), no two share an image, and a seed's
// partition is a permutation of the episodes.
func TestMTVChunks(t *testing.T) {
	job := iclJob(t, "dpmtv", 1, nil)
	s, err := icl("dpmtv", job)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	items := map[string]bool{}
	for _, i := range s.order {
		ex := &job.Data.Private[i]
		if seen[i] || ex.Canary >= 0 {
			t.Fatalf("episode %d twice or a canary copy", i)
		}
		seen[i] = true
		for _, it := range ex.Items {
			if items[it] {
				t.Fatalf("image %s in two chunks", it)
			}
			items[it] = true
		}
	}
	n := 0
	for i := range job.Data.Private {
		if job.Data.Private[i].Canary < 0 {
			n++
		}
	}
	if len(s.order) != n {
		t.Errorf("%d episodes in the partition, the task has %d", len(s.order), n)
	}
	other := iclJob(t, "dpmtv", 1, nil)
	other.Seed++
	o, _ := icl("dpmtv", other)
	if slices.Equal(o.order, s.order) {
		t.Error("two seeds give the same partition")
	}
}

// TestMTVCleanEqualsNoiseless checks that DP-MTV at ε = ∞ with a clipping
// norm no head output reaches is clean MTV: the same steering, bit for
// bit.
func TestMTVCleanEqualsNoiseless(t *testing.T) {
	a := iclJob(t, "dpmtv", math.Inf(1), map[string]any{"clip": 1e9})
	b := iclJob(t, "mtv", math.Inf(1), nil)
	ra, err := DPMTV{}.FineTune(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (MTV{}).FineTune(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	sa, sb := lmOf(a).Steer, lmOf(b).Steer
	if sa == nil || sb == nil || len(sa.Heads) != len(sb.Heads) {
		t.Fatalf("steering %v and %v", sa, sb)
	}
	for i := range sa.Heads {
		if sa.Heads[i].Layer != sb.Heads[i].Layer || sa.Heads[i].Head != sb.Heads[i].Head || !slices.Equal(sa.Heads[i].Value, sb.Heads[i].Value) {
			t.Fatalf("head %d differs", i)
		}
	}
	if ra.Values["mtv_chunks"] == 0 || len(ra.Members) == 0 || len(ra.NonMembers) == 0 {
		t.Errorf("values %v, %d members, %d non-members", ra.Values, len(ra.Members), len(ra.NonMembers))
	}
	q := ra.Pose(&a.Data.Test[0])
	if len(q.Images) != 1 || !slices.Equal(q.Answer, a.Data.Test[0].Answer) {
		t.Errorf("the test episode is not posed as its query alone: %d images", len(q.Images))
	}
}

// TestMTVPrivacyRecord checks DP-MTV's records: public selection is one
// analytic Gaussian release at ε; private selection composes it at
// 0.9·ε with a pure 0.1·ε selection, the record's ε is the sum and the
// accountants' ε of the same events are no larger; neither exceeds the
// target.
func TestMTVPrivacyRecord(t *testing.T) {
	for _, sel := range []string{"public", "private"} {
		job := iclJob(t, "dpmtv", 2, map[string]any{"selection": sel})
		res, err := DPMTV{}.FineTune(context.Background(), job)
		if err != nil {
			t.Fatal(err)
		}
		p := res.Privacy
		var ev struct {
			Type   string            `json:"type"`
			Events []json.RawMessage `json:"events"`
		}
		if err := json.Unmarshal(p.Events, &ev); err != nil {
			t.Fatal(err)
		}
		// RDP bounds the exact ε from above; PLD equals it up to its
		// discretisation (and composes tighter than the sum).
		if float64(p.Epsilon) > 2 || res.EpsilonPLD > float64(p.Epsilon)*(1+1e-6) || res.EpsilonRDP < float64(p.Epsilon)*(1-1e-6) {
			t.Errorf("%s: ε %v (PLD %v, RDP %v), target 2", sel, p.Epsilon, res.EpsilonPLD, res.EpsilonRDP)
		}
		if sel == "public" && math.Abs(res.EpsilonPLD-2) > 1e-6 {
			t.Errorf("public: PLD ε %v of one Gaussian release calibrated to ε = 2", res.EpsilonPLD)
		}
		e1, err := privacy.GaussianEpsilon(res.Values["mtv_sigma"], res.Values["mtv_sensitivity"], 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		wantE1 := 2.0
		if sel == "private" {
			wantE1 = 1.8
			if len(ev.Events) != 2 || !strings.Contains(string(ev.Events[1]), "epsilon") {
				t.Errorf("private: events %s", p.Events)
			}
			if !slices.ContainsFunc(p.Caveats, func(c string) bool { return strings.HasPrefix(c, "private head selection") }) {
				t.Error("private: no caveat for the candidate masks")
			}
			if math.Abs(float64(p.Epsilon)-2) > 1e-12 {
				t.Errorf("private: ε %v, want ε₁ 1.8 + ε₂ 0.2", p.Epsilon)
			}
		}
		if math.Abs(e1-wantE1) > 1e-6 {
			t.Errorf("%s: the release's ε₁ = %v, want %v", sel, e1, wantE1)
		}
		if lmOf(job).Steer == nil {
			t.Errorf("%s: no steering", sel)
		}
		if sel == "private" && len(res.Metrics) > 0 {
			t.Errorf("private: %d per-step metrics of private queries released", len(res.Metrics))
		}
		if res.Mean == nil || res.Mean.Epsilon != e1 && math.Abs(res.Mean.Epsilon-wantE1) > 1e-12 || res.Mean.Relation != "zero-out" {
			t.Errorf("%s: mean release %+v", sel, res.Mean)
		}
	}
}

// TestGumbelArgmax checks the Gumbel mechanism's choice frequencies
// against the exponential mechanism's exp(−ε·s/(2Δ)) normalised, over
// 40 000 draws (each frequency within 5 sd), and that ε = ∞ picks the
// lowest score.
func TestGumbelArgmax(t *testing.T) {
	scores := []float64{3, 4, 6, 3.5}
	const sens, eps, n = 2.0, 1.5, 40000
	rng := rand.New(rand.NewPCG(3, 4))
	count := make([]int, len(scores))
	for range n {
		count[gumbelArgmax(scores, sens, eps, rng)]++
	}
	var z float64
	for _, s := range scores {
		z += math.Exp(-eps * s / (2 * sens))
	}
	for j, s := range scores {
		p := math.Exp(-eps*s/(2*sens)) / z
		if d := math.Abs(float64(count[j])/n - p); d > 5*math.Sqrt(p*(1-p)/n) {
			t.Errorf("candidate %d: frequency %v, exponential mechanism %v", j, float64(count[j])/n, p)
		}
	}
	if j := gumbelArgmax(scores, sens, math.Inf(1), rng); j != 0 {
		t.Errorf("ε = ∞ picked %d, want 0", j)
	}
}

// TestMTVErrors checks the errors before anything runs.
func TestMTVErrors(t *testing.T) {
	for _, tc := range []struct {
		name, method, task string
		params             map[string]any
		want               string
	}{
		{"too many chunks", "dpmtv", "icl", map[string]any{"chunks": 10000}, "chunks"},
		{"too many chunks with validation", "dpmtv", "icl", map[string]any{"chunks": 200, "selection": "private"}, "validation"},
		{"shots", "dpmtv", "icl", map[string]any{"shots": 99}, "shots"},
		{"layer", "dpmtv", "icl", map[string]any{"layers": "7"}, "layer"},
		{"not in context", "dpmtv", "fashion-vqa", nil, "in-context"},
		{"few-shot not in context", "fewshot", "fashion-vqa", nil, "in-context"},
	} {
		var job *Job
		if tc.task == "icl" {
			job = iclJob(t, tc.method, 1, tc.params)
		} else {
			job = smokeJob(t, tc.task, tc.method, 16, math.Inf(1), tc.params, 1)
			job.Epsilon = 1
			if tc.method == "fewshot" {
				job.Epsilon = math.Inf(1)
			}
		}
		m, _ := Lookup(tc.method)
		_, err := m.FineTune(context.Background(), job)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one about %q", tc.name, err, tc.want)
		}
	}
	if _, err := (MTV{}).FineTune(context.Background(), iclJob(t, "mtv", 1, nil)); err == nil {
		t.Error("mtv at ε = 1: no error")
	}
}

// TestInContextBaselines checks zero-shot and few-shot: the poses (the
// query alone; one private episode's labelled images, then the query),
// the members (nothing used; the prompt's images) and the records.
func TestInContextBaselines(t *testing.T) {
	job := iclJob(t, "fewshot", math.Inf(1), nil)
	res, err := FewShot{}.FineTune(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	test := &job.Data.Test[0]
	q := res.Pose(test)
	if n, err := datasets.EpisodeShots(&q); err != nil || n != job.Data.Shots+1 || !slices.Equal(q.Answer, test.Answer) {
		t.Fatalf("few-shot pose: %d shots (%v), want %d", n, err, job.Data.Shots+1)
	}
	if len(res.Members) != job.Data.Shots+1 || !math.IsInf(float64(res.Privacy.Epsilon), 1) {
		t.Errorf("few-shot: %d members, ε %v", len(res.Members), res.Privacy.Epsilon)
	}
	for _, m := range res.Members {
		if !slices.ContainsFunc(q.Images, func(img []float32) bool { return &img[0] == &m.Images[0][0] }) {
			t.Fatal("a member's image is not in the prompt")
		}
	}
	zj := iclJob(t, "zeroshot", math.Inf(1), nil)
	zr, err := ZeroShot{}.FineTune(context.Background(), zj)
	if err != nil {
		t.Fatal(err)
	}
	if z := zr.Pose(test); len(z.Images) != 1 || zr.Privacy.Epsilon != 0 || lmOf(zj).Steer != nil {
		t.Errorf("zero-shot: %d images, ε %v", len(z.Images), zr.Privacy.Epsilon)
	}
}

// TestMTVDeterminism checks that DP-MTV's release (the steering and the
// privacy record) has the same bits whatever GOMAXPROCS and Workers are,
// with both head selections.
func TestMTVDeterminism(t *testing.T) {
	for _, sel := range []string{"public", "private"} {
		var ref *Result
		var refSteer []float32
		for _, procs := range []int{1, 4} {
			old := runtime.GOMAXPROCS(procs)
			job := iclJob(t, "dpmtv", 1, map[string]any{"selection": sel})
			job.Workers = procs
			res, err := DPMTV{}.FineTune(context.Background(), job)
			runtime.GOMAXPROCS(old)
			if err != nil {
				t.Fatal(err)
			}
			var v []float32
			for _, h := range lmOf(job).Steer.Heads {
				v = append(v, float32(h.Layer), float32(h.Head))
				v = append(v, h.Value...)
			}
			if ref == nil {
				ref, refSteer = res, v
				continue
			}
			if !slices.Equal(v, refSteer) || res.Values["mtv_sigma"] != ref.Values["mtv_sigma"] || string(res.Privacy.Events) != string(ref.Privacy.Events) {
				t.Errorf("%s: GOMAXPROCS %d gives another release", sel, procs)
			}
		}
	}
}

// TestReinforce checks REINFORCE's parts against references: the score
// d/dθ log Pr(z) against central differences of log sigmoid, Adam's first
// step (lr·sign(g), Kingma & Ba's bias correction), and the whole loop on
// a loss with known best mask (heads 0 and 3 lower the loss, head 1
// raises it, the others do nothing): p rises for 0 and 3 and falls for 1.
func TestReinforce(t *testing.T) {
	for _, theta := range []float64{-2, -1, 0, 0.7} {
		p := 1 / (1 + math.Exp(-theta))
		for _, z := range []bool{false, true} {
			logp := func(th float64) float64 {
				q := 1 / (1 + math.Exp(-th))
				if z {
					return math.Log(q)
				}
				return math.Log(1 - q)
			}
			const h = 1e-5
			fd := (logp(theta+h) - logp(theta-h)) / (2 * h)
			if got := scoreBernoulli(z, p); math.Abs(got-fd) > 1e-8 {
				t.Errorf("θ %v, z %v: score %v, central difference %v", theta, z, got, fd)
			}
		}
	}
	a := newAdam(3, 0.1)
	x := []float64{1, 1, 1}
	a.step(x, []float64{2, -0.5, 1e-3})
	for i, want := range []float64{0.9, 1.1, 0.9} {
		if math.Abs(x[i]-want) > 1e-6 {
			t.Errorf("Adam's first step: x[%d] = %v, want %v", i, x[i], want)
		}
	}
	r := reinforcer{heads: 6, steps: 200, masks: 16, lr: 0.1}
	p, metrics, err := r.run(5, rand.New(rand.NewPCG(1, 1)), func(masks [][]bool, q int) ([]float64, error) {
		l := make([]float64, len(masks))
		for i, z := range masks {
			l[i] = float64(q) // the item shifts every loss alike
			for j, w := range []float64{-1, 1, 0, -1, 0, 0} {
				if z[j] {
					l[i] += w
				}
			}
		}
		return l, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !(p[0] > 0.9 && p[3] > 0.9 && p[1] < 0.05) || len(metrics) != 200 {
		t.Errorf("learned p = %.3f (%d metrics), want heads 0 and 3 near 1, head 1 near 0", p, len(metrics))
	}
}

// TestFrequentMasks checks the private selection's candidate domain: the
// top distinct masks by frequency, most frequent first. With p = (0.999,
// 0.001, 0.8) the two masks (1, 0, 1) and (1, 0, 0) hold almost every
// draw, in that order.
func TestFrequentMasks(t *testing.T) {
	got := frequentMasks([]float64{0.999, 0.001, 0.8}, 500, 2, rand.New(rand.NewPCG(2, 3)))
	want := [][]bool{{true, false, true}, {true, false, false}}
	if len(got) != 2 || !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
		t.Errorf("top masks %v, want %v", got, want)
	}
	if all := frequentMasks([]float64{0.5, 0.5}, 200, 10, rand.New(rand.NewPCG(2, 3))); len(all) != 4 {
		t.Errorf("%d distinct masks of two fair heads, want 4", len(all))
	}
}

// TestHugeEpsilon checks the accounting of a target ε = 1000 (σ tiny),
// whose loss range the PLD's default grid cannot hold: on the grid that
// follows the target (privacy.PLDInterval), the RDP calibration records
// both ε, the PLD's no larger than the RDP's, and the PLD calibration
// meets the target within 1% with a σ no larger than RDP's.
func TestHugeEpsilon(t *testing.T) {
	const eps = 1000
	rdp, err := calibrate("dpsgd", Hyper{Accountant: "rdp", Clip: 1}, eps, 1e-5, 0.06, 200)
	if err != nil {
		t.Fatal(err)
	}
	if !(rdp.EpsilonRDP <= eps && rdp.EpsilonRDP >= 0.99*eps) || !(rdp.EpsilonPLD <= rdp.EpsilonRDP) || len(rdp.Warnings) != 0 {
		t.Errorf("rdp: σ %v, ε PLD %v, RDP %v, warnings %q", rdp.Sigma, rdp.EpsilonPLD, rdp.EpsilonRDP, rdp.Warnings)
	}
	pld, err := calibrate("dpsgd", Hyper{Accountant: "pld", Clip: 1}, eps, 1e-5, 0.06, 200)
	if err != nil {
		t.Fatal(err)
	}
	if !(pld.EpsilonPLD <= eps && pld.EpsilonPLD >= 0.99*eps) || pld.Sigma > rdp.Sigma {
		t.Errorf("pld: σ %v (RDP's %v), ε PLD %v, RDP %v", pld.Sigma, rdp.Sigma, pld.EpsilonPLD, pld.EpsilonRDP)
	}
}
