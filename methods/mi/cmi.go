// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package mi

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// The forms of the CMI estimate (CMIOptions.Form), all computed from the
// classifier's logit s = log γ/(1−γ), the estimated log likelihood ratio
// log p(x,y,z)/p(x|z)p(y,z), on held-out samples.
const (
	// FormDV is the Donsker–Varadhan form mean_joint s − log
	// mean_resampled eˢ (Molavipour et al., Eq. 14; the default).
	FormDV = "dv"
	// FormLogOdds is mean_joint s, the plug-in log likelihood ratio.
	FormLogOdds = "log-odds"
	// FormPaper is Sec-MMFL's stated estimate, (1/B) Σ_b log
	// γ(G_b, D_b^i | D_b^{-i}) / γ(G_b, D̃_b^i | D_b^{-i}): the mean log
	// ratio of the classifier's outputs on each joint tuple and its
	// resampled counterpart.
	FormPaper = "paper"
)

// CMIOptions configures CMI. A nil *CMIOptions means the defaults.
type CMIOptions struct {
	// K is the number of nearest neighbours in z among which x is
	// resampled; 0 means 5.
	K int
	// Hidden are the classifier's hidden widths; nil means [64, 64].
	Hidden []int
	// Steps is the number of Adam steps on minibatches of Batch joint and
	// Batch resampled tuples, with learning rate LR; 0 means 2000, 64 and
	// 1e-3.
	Steps, Batch int
	LR           float64
	// Form is FormDV, FormLogOdds or FormPaper; "" means FormDV.
	Form string
	// Seed seeds the split, the resampling, the initialisation and the
	// minibatches.
	Seed uint64
}

func (o *CMIOptions) withDefaults() (CMIOptions, error) {
	var v CMIOptions
	if o != nil {
		v = *o
		v.Hidden = slices.Clone(o.Hidden)
	}
	if v.K == 0 {
		v.K = 5
	}
	if v.Hidden == nil {
		v.Hidden = []int{64, 64}
	}
	if v.Steps == 0 {
		v.Steps = 2000
	}
	if v.Batch == 0 {
		v.Batch = 64
	}
	if v.LR == 0 {
		v.LR = 1e-3
	}
	if v.Form == "" {
		v.Form = FormDV
	}
	switch {
	case v.K < 1 || v.Steps < 1 || v.Batch < 1:
		return v, fmt.Errorf("mi: k = %d, %d steps, batch %d: want positive values", v.K, v.Steps, v.Batch)
	case !(v.LR > 0) || math.IsInf(v.LR, 1):
		return v, fmt.Errorf("mi: learning rate %v, want a finite value > 0", v.LR)
	case v.Form != FormDV && v.Form != FormLogOdds && v.Form != FormPaper:
		return v, fmt.Errorf("mi: unknown CMI form %q (want %s, %s or %s)", v.Form, FormDV, FormLogOdds, FormPaper)
	}
	for _, h := range v.Hidden {
		if h < 1 {
			return v, fmt.Errorf("mi: hidden width %d, want ≥ 1", h)
		}
	}
	return v, nil
}

// maxLogit clamps the classifier's output γ to [1e-4, 1−1e-4].
var maxLogit = math.Log(1e4 - 1)

// CMI estimates the conditional mutual information I(X; Y | Z), in nats,
// from n joint samples (x[b], y[b], z[b]) with the classifier-based
// estimator with nearest-neighbour resampling of Molavipour et al.:
//
//  1. the samples are split at random into a training and an evaluation
//     half;
//  2. within each half, every joint tuple (x_b, y_b, z_b) gets a
//     resampled tuple (x_j, y_b, z_b), x_j the x of one of the K nearest
//     neighbours of z_b in z (Euclidean, after standardising z; ties
//     broken at random), drawn uniformly: approximately a draw of
//     p(x|z)p(y,z);
//  3. an MLP classifier on the standardised (x, y, z) learns, by binary
//     cross-entropy, to tell joint tuples (label 1) from resampled ones
//     (label 0) on four fifths of the training half, keeping the weights
//     of the lowest cross-entropy on the last fifth (early stopping); its
//     logit s estimates the log likelihood ratio log p(x,y,z)/p(x|z)p(y,z);
//  4. the estimate is the Form of s on the evaluation half, with γ = σ(s)
//     clamped to [1e-4, 1−1e-4].
//
// It returns an error for fewer than 4(K+1) samples, ragged or non-finite
// rows, or invalid options.
//
// References:
//   - A. Molavipour, G. Bassi and M. Skoglund, Neural estimators for
//     conditional mutual information using nearest neighbors sampling, IEEE
//     Trans. Signal Processing 69, 2021 (Algorithm 1, Eq. 14).
//   - S. Mukherjee, H. Asnani and S. Kannan, CCMI: Classifier based
//     conditional mutual information estimation, UAI 2019.
func CMI(x, y, z [][]float64, opts *CMIOptions) (float64, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return 0, err
	}
	n := len(x)
	if len(y) != n || len(z) != n {
		return 0, fmt.Errorf("mi: %d, %d and %d samples of x, y and z, want as many", len(x), len(y), len(z))
	}
	if n < 4*(o.K+1) {
		return 0, fmt.Errorf("mi: %d samples, want at least %d for k = %d", n, 4*(o.K+1), o.K)
	}
	for _, rows := range [][][]float64{x, y, z} {
		if err := checkRows(rows); err != nil {
			return 0, err
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x636d69)) // "cmi"
	perm := rng.Perm(n)
	train, eval := perm[:n/2], perm[n/2:]
	zs := standardize(z, z)
	tj, tr := tuples(x, y, z, zs, train, o.K, rng)
	ej, er := tuples(x, y, z, zs, eval, o.K, rng)
	st := fitStandardizer(tj)
	st.applyAll(tj, tr, ej, er)
	m := NewMLP(len(tj[0]), o.Hidden, rng)
	clear(m.W[len(m.W)-1]) // start at s = 0: no dependence, estimate 0
	// The last fifth of the training tuples validates: the classifier
	// keeps the weights of the lowest validation loss.
	v := len(tj) - len(tj)/5
	trainClassifier(m, tj[:v], tr[:v], tj[v:], tr[v:], o, rng)
	return cmiForm(m, ej, er, o.Form), nil
}

// tuples returns the joint tuples [x, y, z] of the samples idx and their
// resampled tuples [x_j, y, z], j one of the k nearest neighbours of z
// among idx in the standardised zs.
func tuples(x, y, z, zs [][]float64, idx []int, k int, rng *rand.Rand) (joint, resampled [][]float64) {
	nb := make([]int, len(idx))
	d := make([]float64, len(idx))
	for a, i := range idx {
		for b, j := range idx {
			d[b] = sqDist(zs[i], zs[j])
		}
		d[a] = math.Inf(1) // not itself
		// Neighbours in random order before the stable sort: ties in z
		// (a discrete z, such as a caption's words) are broken at random,
		// so the resampled x is drawn from all the tied samples, not
		// always from the same k.
		for b, p := range rng.Perm(len(idx)) {
			nb[b] = p
		}
		slices.SortStableFunc(nb, func(p, q int) int { return cmp.Compare(d[p], d[q]) })
		j := idx[nb[rng.IntN(k)]]
		joint = append(joint, concat(x[i], y[i], z[i]))
		resampled = append(resampled, concat(x[j], y[i], z[i]))
	}
	return joint, resampled
}

// trainClassifier trains m by Adam on the binary cross-entropy of joint
// (label 1) against resampled (label 0) tuples, o.Batch of each per step,
// and keeps the weights with the lowest cross-entropy on the validation
// tuples (vj, vr), checked every Steps/20 steps and at the start (early
// stopping: the estimate then never rests on a classifier that fits the
// training tuples better than new ones).
func trainClassifier(m *MLP, joint, resampled, vj, vr [][]float64, o CMIOptions, rng *rand.Rand) {
	t := newTrainer(m, o.LR)
	a := m.newActs()
	inv := 1 / float64(2*o.Batch)
	every := max(1, o.Steps/20)
	best, bestW, bestB := bce(m, vj, vr), cloneAll(m.W), cloneAll(m.B)
	for step := range o.Steps {
		for range o.Batch {
			// d BCE/d s = σ(s) − label.
			s := m.forward(joint[rng.IntN(len(joint))], a)
			m.backward(a, (sigmoid(s)-1)*inv, nil)
			s = m.forward(resampled[rng.IntN(len(resampled))], a)
			m.backward(a, sigmoid(s)*inv, nil)
		}
		t.step()
		if (step+1)%every == 0 || step == o.Steps-1 {
			if l := bce(m, vj, vr); l < best {
				best, bestW, bestB = l, cloneAll(m.W), cloneAll(m.B)
			}
		}
	}
	for l := range m.W {
		copy(m.W[l], bestW[l])
		copy(m.B[l], bestB[l])
	}
}

// bce returns the mean binary cross-entropy of m on joint (label 1) and
// resampled (label 0) tuples.
func bce(m *MLP, joint, resampled [][]float64) float64 {
	a := m.newActs()
	s := 0.0
	for _, x := range joint {
		s -= logSigmoid(m.forward(x, a))
	}
	for _, x := range resampled {
		s -= logSigmoid(-m.forward(x, a))
	}
	return s / float64(len(joint)+len(resampled))
}

func cloneAll(xs [][]float32) [][]float32 {
	out := make([][]float32, len(xs))
	for i, x := range xs {
		out[i] = slices.Clone(x)
	}
	return out
}

// cmiForm returns the estimate of the given form on held-out tuples.
func cmiForm(m *MLP, joint, resampled [][]float64, form string) float64 {
	a := m.newActs()
	logit := func(x []float64) float64 { return max(-maxLogit, min(maxLogit, m.forward(x, a))) }
	sj, sr := make([]float64, len(joint)), make([]float64, len(resampled))
	for b := range joint {
		sj[b], sr[b] = logit(joint[b]), logit(resampled[b])
	}
	switch form {
	case FormLogOdds:
		return mean(sj)
	case FormPaper:
		s := 0.0
		for b := range sj {
			s += logSigmoid(sj[b]) - logSigmoid(sr[b])
		}
		return s / float64(len(sj))
	}
	return mean(sj) - logMeanExp(sr)
}

func sigmoid(s float64) float64 { return 1 / (1 + math.Exp(-s)) }

// logSigmoid returns log σ(s) = −log(1 + e^{−s}).
func logSigmoid(s float64) float64 {
	if s < 0 {
		return s - math.Log1p(math.Exp(s))
	}
	return -math.Log1p(math.Exp(-s))
}

// logMeanExp returns log (1/n) Σ e^{v_i}, computed stably.
func logMeanExp(v []float64) float64 {
	m := slices.Max(v)
	s := 0.0
	for _, x := range v {
		s += math.Exp(x - m)
	}
	return m + math.Log(s/float64(len(v)))
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func sqDist(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		d := v - b[i]
		s += float64(d * d)
	}
	return s
}

func concat(parts ...[]float64) []float64 {
	var out []float64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// checkRows returns an error for rows of different widths, empty rows or
// non-finite values.
func checkRows(rows [][]float64) error {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return errors.New("mi: empty samples")
	}
	for i, r := range rows {
		if len(r) != len(rows[0]) {
			return fmt.Errorf("mi: sample %d has %d values, want %d", i, len(r), len(rows[0]))
		}
		for _, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("mi: sample %d has a non-finite value", i)
			}
		}
	}
	return nil
}

// A standardizer maps each coordinate to zero mean and unit variance of
// the rows it was fitted on (a constant coordinate keeps scale 1).
type standardizer struct{ mean, scale []float64 }

func fitStandardizer(rows [][]float64) standardizer {
	d := len(rows[0])
	s := standardizer{mean: make([]float64, d), scale: make([]float64, d)}
	for _, r := range rows {
		for j, v := range r {
			s.mean[j] += v
		}
	}
	for j := range s.mean {
		s.mean[j] /= float64(len(rows))
	}
	for _, r := range rows {
		for j, v := range r {
			s.scale[j] += float64((v - s.mean[j]) * (v - s.mean[j]))
		}
	}
	for j, v := range s.scale {
		s.scale[j] = 1
		if sd := math.Sqrt(v / float64(len(rows))); sd > 0 {
			s.scale[j] = 1 / sd
		}
	}
	return s
}

// apply returns the standardised copy of r.
func (s standardizer) apply(r []float64) []float64 {
	out := make([]float64, len(r))
	for j, v := range r {
		out[j] = (v - s.mean[j]) * s.scale[j]
	}
	return out
}

// applyAll standardises the rows of every set in place.
func (s standardizer) applyAll(sets ...[][]float64) {
	for _, set := range sets {
		for i, r := range set {
			set[i] = s.apply(r)
		}
	}
}

// standardize returns rows standardised by the statistics of fit.
func standardize(rows, fit [][]float64) [][]float64 {
	s := fitStandardizer(fit)
	out := make([][]float64, len(rows))
	for i, r := range rows {
		out[i] = s.apply(r)
	}
	return out
}
