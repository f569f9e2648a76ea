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
	"regexp"
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

var (
	_ Optioned = MinKMIA{}
	_ Optioned = MaxRenyiMIA{}
)

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
// orders are the Rényi orders the sets read (pass.entropies).
// A set whose score is undefined for some example (an empty slice: a
// sequence without an image has no img positions) is left out with a
// warning.
func runSets(ctx context.Context, name string, t *Target, sets []scoreSet, orders []float64) (*Report, error) {
	if t.Model == nil && t.Classifier == nil && t.Fusion == nil {
		return nil, fmt.Errorf("attacks: %s: no model", name)
	}
	if len(t.Members) == 0 || len(t.NonMembers) == 0 {
		return nil, fmt.Errorf("attacks: %s: no members or no non-members", name)
	}
	pm, pn, err := t.forwardAll(ctx, orders)
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
	return runSets(ctx, a.Name(), t, []scoreSet{{"mia_", "", func(p *pass) float64 { return -meanLoss(p) }}}, nil)
}

// ZlibMIA is the zlib-ratio attack of Carlini et al. (2021, §5.2): the
// loss of the answer over its zlib entropy, the length in bytes of the
// zlib-compressed answer text (Target.Decode, or the token ids as decimal
// words), so that answers that are hard to compress but fitted well look
// like members. The score is minus the ratio; results have prefix zlib_.
//
// The length is Go's compress/zlib's at the default level, which is not
// the reference implementation's (Carlini et al. use Python's
// zlib.compress): Go ends the stream with an empty final stored block
// where zlib marks the last data block final, 4 or 5 bytes more as the
// bit padding falls (13 bytes against 9 for "a"), 3 for the empty
// string, and more where Go's encoder picks other matches. The shift
// depends on the text, so the ratio is not the reference's times a
// constant; it is largest, relatively, on short answers
// (TestZlibLenFraming pins it against zlib.compress).
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
	}}}, nil)
}

// zlibLen returns the length of s compressed by Go's compress/zlib at the
// default level: 3 to 5 bytes more than Python's zlib.compress on short
// texts, by the framing (ZlibMIA).
func zlibLen(s string) int {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write([]byte(s)) // a bytes.Buffer does not fail
	w.Close()
	return b.Len()
}

// MinKFractions are the default fractions K of Min-K% Prob (Shi et al.
// report K = 10% and 20% among their best).
var MinKFractions = []float64{0.1, 0.2}

// MinKMIA is Min-K% Prob (Shi et al. 2024): the mean log-probability of
// the K% least likely answer tokens (k = max(1, ⌊n·K/100⌋) of n), for each
// K of K; members have fewer outlier tokens of low probability. Results
// have prefix mink<K>_ (mink10_, mink20_; a fractional K is written with
// _ for the point, mink12_5_).
//
// References:
//   - W. Shi et al., Detecting pretraining data from large language
//     models, ICLR 2024, arXiv:2310.16789.
type MinKMIA struct {
	// K are the percentages K, in [0, 100] (K = 0 takes the single least
	// likely token); nil means 100·MinKFractions (10, 20). A spec sets
	// them with the option k.
	K []float64
}

// Name implements Attack.
func (MinKMIA) Name() string { return "mink-mia" }

// Options implements Optioned: k.
func (MinKMIA) Options() []Option {
	return []Option{{Name: "k", Elem: "K", Kind: Numbers, Check: checkPercent, Default: percents(MinKFractions),
		Doc: "the percentages K of the least likely answer tokens whose mean log-probability is the score, each in [0, 100]"}}
}

// WithOptions implements Optioned.
func (a MinKMIA) WithOptions(opts map[string][]string) (Attack, error) {
	ops := a.Options()
	if err := checkOptions(a.Name(), ops, opts); err != nil {
		return nil, err
	}
	k, err := numbers(optionValues(ops, opts, "k"))
	return MinKMIA{K: k}, err
}

// Sets implements Optioned.
func (a MinKMIA) Sets() []string {
	var names []string
	for _, k := range a.k() {
		names = append(names, "mink"+numberName(k))
	}
	return names
}

var minkRE = regexp.MustCompile(`^mink[0-9]`)

// Owns implements Optioned: the results of every mink<K>_ set.
func (MinKMIA) Owns(metric string) bool { return minkRE.MatchString(metric) }

func (a MinKMIA) k() []float64 {
	if a.K == nil {
		return scale100(MinKFractions)
	}
	return a.K
}

// Run implements Attack.
func (a MinKMIA) Run(ctx context.Context, t *Target) (*Report, error) {
	var sets []scoreSet
	for i, name := range a.Sets() {
		frac := a.k()[i] / 100
		sets = append(sets, scoreSet{name + "_", name, func(p *pass) float64 { return topMean(p.logp[1], frac, true) }})
	}
	return runSets(ctx, a.Name(), t, sets, nil)
}

// MaxRenyiMIA is MaxRényi-K% of VL-MIA (Li et al. 2024, the attack the
// Dual-Priv paper's Figure 4 reports): for each position slice s, Rényi
// order α and percentage K, the mean of the K% largest Rényi entropies
// H_α of the next-token distributions at the slice's positions (at least
// one: K = 0 takes the maximum), with VL-MIA's clamping (renyi). Lower
// entropy means more member-like, so the score is minus that mean. Every
// combination is one score set, all from one forward pass per example;
// results have prefix renyi_<slice>_a<α>_k<K>_ (α and K written as
// decimals with _ for the point, ∞ as inf: 0_5, 1, 2, inf), e.g.
// renyi_img_ainf_k0_auc. The zero value computes VL-MIA's grid: every
// slice of Slices × every order of RenyiOrders × K ∈ 100·TopFractions, 48
// score sets; a spec's options (Options) choose a sub-grid or other orders
// and K. The sets share the bound check's BoundAlpha (runSets), so fewer
// sets give each a larger share; every other result of a set is the same
// whatever other sets run.
//
// References:
//   - Z. Li, Y. Wu, Y. Chen, F. Tonin, E. Abad Rocamora, V. Cevher,
//     Membership inference attacks against large vision-language models,
//     NeurIPS 2024, arXiv:2411.02902 (§4, MaxRényi-K%).
//   - A. Rényi, On measures of entropy and information, Proc. 4th
//     Berkeley Symposium 1961.
type MaxRenyiMIA struct {
	// Slices are the position slices, each one of Slices; nil means all.
	Slices []string
	// Orders are the Rényi orders α ≥ 0, +Inf included; nil means
	// RenyiOrders. Orders outside RenyiOrders cost one more forward pass
	// unless the Target asks for them (Target.Orders).
	Orders []float64
	// K are the percentages K in [0, 100]; nil means 100·TopFractions
	// (0, 10, 100).
	K []float64
}

// Name implements Attack.
func (MaxRenyiMIA) Name() string { return "maxrenyi-mia" }

// Options implements Optioned: slices, orders and k.
func (MaxRenyiMIA) Options() []Option {
	return []Option{
		{Name: "slices", Elem: "slice", Kind: Choices, Values: slices.Clone(Slices), Default: slices.Clone(Slices),
			Doc: "the position slices whose entropies are scored: img, inst, desp, inst_desp"},
		{Name: "orders", Elem: "order", Kind: Numbers, Check: checkOrder, Default: []string{"0.5", "1", "2", "inf"},
			Doc: "the Rényi orders α, each ≥ 0 or inf (α = 1 is Shannon's entropy, α = 0 the log of the support size)"},
		{Name: "k", Elem: "K", Kind: Numbers, Check: checkPercent, Default: percents(TopFractions),
			Doc: "the percentages K of the largest entropies averaged, each in [0, 100] (0 takes the largest)"},
	}
}

// WithOptions implements Optioned.
func (a MaxRenyiMIA) WithOptions(opts map[string][]string) (Attack, error) {
	ops := a.Options()
	if err := checkOptions(a.Name(), ops, opts); err != nil {
		return nil, err
	}
	orders, err := numbers(optionValues(ops, opts, "orders"))
	if err != nil {
		return nil, err
	}
	k, err := numbers(optionValues(ops, opts, "k"))
	if err != nil {
		return nil, err
	}
	return MaxRenyiMIA{Slices: slices.Clone(optionValues(ops, opts, "slices")), Orders: orders, K: k}, nil
}

// grid returns the slices, orders and percentages of a, defaults filled
// in.
func (a MaxRenyiMIA) grid() (sls []string, orders, ks []float64) {
	sls, orders, ks = a.Slices, a.Orders, a.K
	if sls == nil {
		sls = Slices
	}
	if orders == nil {
		orders = RenyiOrders
	}
	if ks == nil {
		ks = scale100(TopFractions)
	}
	return sls, orders, ks
}

// Sets implements Optioned: slice by slice, then order, then K.
func (a MaxRenyiMIA) Sets() []string {
	var names []string
	sls, orders, ks := a.grid()
	for _, sl := range sls {
		for _, o := range orders {
			for _, k := range ks {
				names = append(names, RenyiName(sl, o, k))
			}
		}
	}
	return names
}

// Owns implements Optioned: the results of every renyi_ set.
func (MaxRenyiMIA) Owns(metric string) bool { return strings.HasPrefix(metric, "renyi_") }

// Run implements Attack.
func (a MaxRenyiMIA) Run(ctx context.Context, t *Target) (*Report, error) {
	var sets []scoreSet
	sls, orders, ks := a.grid()
	for _, sl := range sls {
		for _, o := range orders {
			for _, k := range ks {
				name, frac := RenyiName(sl, o, k), k/100
				sets = append(sets, scoreSet{name + "_", name, func(p *pass) float64 {
					return -topMean(slice(p.entropies(o), sl), frac, false)
				}})
			}
		}
	}
	return runSets(ctx, a.Name(), t, sets, orders)
}

// RenyiName returns the name of the MaxRényi-K% score set of slice, order
// α and percentage k: renyi_<slice>_a<α>_k<k>, the prefix of its results
// without the trailing underscore (numberName spells α and k).
func RenyiName(slice string, alpha, k float64) string {
	return fmt.Sprintf("renyi_%s_a%s_k%s", slice, numberName(alpha), numberName(k))
}

// numberName spells x ≥ 0 in a result name: its shortest decimal without
// exponent, with _ for the point (0.5 → 0_5, 12.5 → 12_5), and inf for
// +Inf.
func numberName(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return strings.ReplaceAll(strconv.FormatFloat(x, 'f', -1, 64), ".", "_")
}

// scale100 returns 100·x for each x: fractions as percentages.
func scale100(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = 100 * v
	}
	return out
}

// percents returns the fractions x as canonical percentages (Option
// Default).
func percents(x []float64) []string {
	out := make([]string, len(x))
	for i, v := range scale100(x) {
		out[i] = formatNumber(v)
	}
	return out
}

func checkPercent(x float64) error {
	if !(x >= 0 && x <= 100) {
		return fmt.Errorf("must be in [0, 100]")
	}
	return nil
}

func checkOrder(x float64) error {
	if !(x >= 0) {
		return fmt.Errorf("must be ≥ 0 or inf")
	}
	return nil
}
