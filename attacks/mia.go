// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/repro-dp/repro/internal/results"
)

func init() {
	Register(LossMIA{})
	Register(ZlibMIA{})
	Register(MinKMIA{})
	Register(MaxRenyiMIA{})
}

// A scoreSet is one named membership score computed from an example's
// pass: prefix names its results (mia_, zlib_, ...), label its rows of
// scores.parquet ("" for the attack's own name).
type scoreSet struct {
	prefix, label string
	score         func(p *pass) float64
}

// runSets runs the score sets of attack name on t: one forward pass per
// example, shared by every set and every attack run on t, then the
// metrics of each set (MembershipAlpha, BoundAlpha shared among the sets).
// A set whose score is undefined for some example (an empty slice: a
// sequence without an image has no img positions) is left out with a
// warning.
func runSets(ctx context.Context, name string, t *Target, sets []scoreSet) (*Report, error) {
	if t.Model == nil {
		return nil, fmt.Errorf("attacks: %s: no model", name)
	}
	if len(t.Members) == 0 || len(t.NonMembers) == 0 {
		return nil, fmt.Errorf("attacks: %s: no members or no non-members", name)
	}
	pm, pn, err := t.forwardAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("attacks: %s: %w", name, err)
	}
	rep := &Report{Results: map[string]float64{}}
	alpha := BoundAlpha / float64(len(sets))
	for _, s := range sets {
		sm, sn := make([]float64, len(pm)), make([]float64, len(pn))
		bad := false
		for i, p := range pm {
			sm[i] = s.score(p)
			bad = bad || math.IsNaN(sm[i])
		}
		for i, p := range pn {
			sn[i] = s.score(p)
			bad = bad || math.IsNaN(sn[i])
		}
		if bad {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: score %s is undefined for some examples (an empty position slice); left out", name, strings.TrimSuffix(s.prefix, "_")))
			continue
		}
		for i, v := range sm {
			rep.Scores = append(rep.Scores, results.Score{Attack: s.label, ExampleID: t.Members[i].ID, Member: true, Score: v})
		}
		for i, v := range sn {
			rep.Scores = append(rep.Scores, results.Score{Attack: s.label, ExampleID: t.NonMembers[i].ID, Member: false, Score: v})
		}
		if err := MembershipAlpha(rep, s.prefix, sm, sn, t.TPRBound, alpha); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// meanLoss returns the mean cross-entropy of the answer tokens of p.
func meanLoss(p *pass) float64 {
	if len(p.logp[1]) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, l := range p.logp[1] {
		s -= l
	}
	return s / float64(len(p.logp[1]))
}

// topMean returns the mean of the k = max(1, ⌊len(x)·frac⌋) largest values
// of x (the smallest when smallest is set), or NaN if x is empty. x is not
// modified.
func topMean(x []float64, frac float64, smallest bool) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if !smallest {
		slices.Reverse(s)
	}
	k := max(1, int(float64(len(s))*frac))
	sum := 0.0
	for _, v := range s[:k] {
		sum += v
	}
	return sum / float64(k)
}

// LossMIA is the loss-threshold membership inference attack (Yeom et al.
// 2018): the score of an example is minus its loss under the trained model
// (the mean next-token cross-entropy over its answer tokens), so examples
// the model fits better look more like members. Perplexity, exp(loss), is
// a monotone transform of it with the same ROC, so it is not reported
// apart. It reports, with prefix mia_, the metrics of Membership over
// Members and NonMembers.
//
// References:
//   - S. Yeom, I. Giacomelli, M. Fredrikson, S. Jha, Privacy risk in machine
//     learning: analyzing the connection to overfitting, CSF 2018.
type LossMIA struct{}

// Name implements Attack.
func (LossMIA) Name() string { return "loss-mia" }

// Run implements Attack.
func (a LossMIA) Run(ctx context.Context, t *Target) (*Report, error) {
	return runSets(ctx, a.Name(), t, []scoreSet{{"mia_", "", func(p *pass) float64 { return -meanLoss(p) }}})
}

// ZlibMIA is the zlib-ratio attack of Carlini et al. (2021, §5.2): the
// loss of the answer over its zlib entropy, the length in bytes of the
// zlib-compressed answer text (Target.Decode, or the token ids as decimal
// words), so that answers that are hard to compress but fitted well look
// like members. The score is minus the ratio; results have prefix zlib_.
//
// References:
//   - N. Carlini et al., Extracting training data from large language
//     models, USENIX Security 2021, arXiv:2012.07805.
type ZlibMIA struct{}

// Name implements Attack.
func (ZlibMIA) Name() string { return "zlib-mia" }

// Run implements Attack.
func (a ZlibMIA) Run(ctx context.Context, t *Target) (*Report, error) {
	decode := t.Decode
	if decode == nil {
		decode = func(ids []int) string {
			w := make([]string, len(ids))
			for i, id := range ids {
				w[i] = strconv.Itoa(id)
			}
			return strings.Join(w, " ")
		}
	}
	return runSets(ctx, a.Name(), t, []scoreSet{{"zlib_", "zlib", func(p *pass) float64 {
		return -meanLoss(p) / float64(zlibLen(decode(p.answer)))
	}}})
}

// zlibLen returns the length of s compressed by zlib at the default level.
func zlibLen(s string) int {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write([]byte(s)) // a bytes.Buffer does not fail
	w.Close()
	return b.Len()
}

// MinKFractions are the fractions K of Min-K% Prob.
var MinKFractions = []float64{0.1, 0.2}

// MinKMIA is Min-K% Prob (Shi et al. 2024): the mean log-probability of
// the K% least likely answer tokens (at least one), for K in
// MinKFractions; members have fewer outlier tokens of low probability.
// Results have prefix mink10_, mink20_.
//
// References:
//   - W. Shi et al., Detecting pretraining data from large language
//     models, ICLR 2024, arXiv:2310.16789.
type MinKMIA struct{}

// Name implements Attack.
func (MinKMIA) Name() string { return "mink-mia" }

// Run implements Attack.
func (a MinKMIA) Run(ctx context.Context, t *Target) (*Report, error) {
	var sets []scoreSet
	for _, k := range MinKFractions {
		name := fmt.Sprintf("mink%d", int(math.Round(100*k)))
		sets = append(sets, scoreSet{name + "_", name, func(p *pass) float64 { return topMean(p.logp[1], k, true) }})
	}
	return runSets(ctx, a.Name(), t, sets)
}

// MaxRenyiMIA is MaxRényi-K% of VL-MIA (Li et al. 2024, the attack the
// Dual-Priv paper's Figure 4 reports): for each position slice of Slices,
// Rényi order α of RenyiOrders and fraction K of TopFractions, the mean
// of the K% largest Rényi entropies H_α of the next-token distributions
// at the slice's positions (at least one: K = 0 takes the maximum), with
// VL-MIA's clamping (renyi). Lower entropy means more member-like, so the
// score is minus that mean. Every combination is one score set, all from
// one forward pass per example; results have prefix
// renyi_<slice>_a<α>_k<K>_ (α written 0_5, 1, 2, inf; K in percent), e.g.
// renyi_img_ainf_k0_auc.
//
// References:
//   - Z. Li, Y. Wu, Y. Chen, F. Tonin, E. Abad Rocamora, V. Cevher,
//     Membership inference attacks against large vision-language models,
//     NeurIPS 2024, arXiv:2411.02902 (§4, MaxRényi-K%).
//   - A. Rényi, On measures of entropy and information, Proc. 4th
//     Berkeley Symposium 1961.
type MaxRenyiMIA struct{}

// Name implements Attack.
func (MaxRenyiMIA) Name() string { return "maxrenyi-mia" }

// Run implements Attack.
func (a MaxRenyiMIA) Run(ctx context.Context, t *Target) (*Report, error) {
	var sets []scoreSet
	for _, sl := range Slices {
		for o := range RenyiOrders {
			for _, k := range TopFractions {
				name := RenyiName(sl, RenyiOrders[o], k)
				sets = append(sets, scoreSet{name + "_", name, func(p *pass) float64 {
					return -topMean(slice(p.ent[o], sl), k, false)
				}})
			}
		}
	}
	return runSets(ctx, a.Name(), t, sets)
}

// RenyiName returns the name of the MaxRényi-K% score set of slice, order
// α and fraction k: renyi_<slice>_a<α>_k<100k>, the prefix of its results
// without the trailing underscore.
func RenyiName(slice string, alpha, k float64) string {
	a := strings.ReplaceAll(strconv.FormatFloat(alpha, 'g', -1, 64), ".", "_")
	if math.IsInf(alpha, 1) {
		a = "inf"
	}
	return fmt.Sprintf("renyi_%s_a%s_k%d", slice, a, int(math.Round(100*k)))
}
