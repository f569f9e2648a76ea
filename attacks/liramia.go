// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"context"
	"errors"
	"fmt"
	"math"
)

func init() { Register(LiRAMIA{}) }

// LiRAConfLabel labels the rows of scores.parquet that hold each pool
// example's logit-scaled confidence under a run's model: the input of the
// likelihood-ratio test over the runs of one configuration (LiRAGroup).
const LiRAConfLabel = "lira-conf"

// LiRAMIA is the per-run half of LiRA (Carlini et al. 2022): it records
// the logit-scaled confidence φ (LogitConfidence) of every example of the
// target's pool, members and non-members, under label LiRAConfLabel, and
// the global-threshold attack on φ (results with prefix conf_). The
// likelihood-ratio test itself needs shadow models trained with and
// without each example; they are the runs of the same configuration at
// other seeds, each trained on its own random half of the same pool, and
// LiRAGroup computes it once they have all run. The target must have a
// pool (Target.Pool, the -lira tasks); one without is an error.
//
// References:
//   - N. Carlini, S. Chien, M. Nasr, S. Song, A. Terzis, F. Tramèr,
//     Membership inference attacks from first principles, IEEE S&P 2022,
//     arXiv:2112.03570.
type LiRAMIA struct{}

// Name implements Attack.
func (LiRAMIA) Name() string { return "lira-mia" }

// Run implements Attack.
func (a LiRAMIA) Run(ctx context.Context, t *Target) (*Report, error) {
	if !t.Pool {
		return nil, errors.New("attacks: lira-mia needs a task with a fixed member/non-member pool (shapes-vqa-lira, fashion-vqa-lira): its shadow models are the runs of the same configuration at other seeds")
	}
	return runSets(ctx, a.Name(), t, []scoreSet{{"conf_", LiRAConfLabel, confidence}}, nil)
}

// confidence returns LiRA's logit-scaled confidence of the answer of p.
func confidence(p *pass) float64 {
	if len(p.logp[1]) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, l := range p.logp[1] {
		s -= l
	}
	return LogitConfidence([]float64{s})
}

// A LiRAModel is one model of a LiRA group: its confidence on each pool
// example (NaN where it was not scored) and whether the example was in
// its training set.
type LiRAModel struct {
	Conf []float64
	In   []bool
}

// LiRAScores returns the online and offline likelihood-ratio scores
// (LiRA) of every pool example under models[target], with the other
// models as shadows: for each example, the Gaussian fits (FitLiRA) of the
// confidences of the shadows that trained on it and of those that did not.
// With fixedVariance, σ_in and σ_out are shared by all examples, as
// Carlini et al. recommend below 64 shadows (§VI-A). An example with no
// shadow in (out) gets a NaN online (and offline) score. LiRAScores panics
// if the models' pools differ in size.
func LiRAScores(models []LiRAModel, target int, fixedVariance bool) (online, offline []float64) {
	n := len(models[target].Conf)
	in, out := make([][]float64, n), make([][]float64, n)
	for j, m := range models {
		if len(m.Conf) != n || len(m.In) != n {
			panic("attacks: LiRA: models with pools of different sizes")
		}
		if j == target {
			continue
		}
		for i, c := range m.Conf {
			switch {
			case math.IsNaN(c):
			case m.In[i]:
				in[i] = append(in[i], c)
			default:
				out[i] = append(out[i], c)
			}
		}
	}
	fits := FitLiRA(in, out, fixedVariance)
	online, offline = make([]float64, n), make([]float64, n)
	for i, phi := range models[target].Conf {
		online[i], offline[i] = LiRA(phi, fits[i])
	}
	return online, offline
}

// LiRAGroup computes LiRA for models[target] with the others as shadows
// and adds the metrics of each score to rep (MembershipAlpha, checked
// against bound): online and offline with fixed variance (prefixes
// lira_online_, lira_offline_) and online with per-example variance
// (lira_online_pe_), and lira_shadows, the number of shadows. Examples
// with an undefined score (no shadow in, or out) are left out of that
// score's metrics; lira_undefined counts the examples with an undefined
// score, each once however many of the three scores it lacks. It returns
// an error if
// there are fewer than 2 shadows or the bound fails.
func LiRAGroup(rep *Report, models []LiRAModel, target int, bound func(float64) (float64, error)) error {
	if len(models) < 3 {
		return fmt.Errorf("attacks: LiRA needs at least 2 shadow runs (runs of the same configuration at other seeds), has %d", len(models)-1)
	}
	if rep.Results == nil {
		rep.Results = map[string]float64{}
	}
	rep.Results["lira_shadows"] = float64(len(models) - 1)
	online, offline := LiRAScores(models, target, true)
	onlinePE, _ := LiRAScores(models, target, false)
	in := models[target].In
	undefined := make([]bool, len(in))
	for _, s := range []struct {
		prefix string
		score  []float64
	}{{"lira_online_", online}, {"lira_offline_", offline}, {"lira_online_pe_", onlinePE}} {
		var mem, non []float64
		for i, v := range s.score {
			switch {
			case math.IsNaN(v):
				undefined[i] = true
			case in[i]:
				mem = append(mem, v)
			default:
				non = append(non, v)
			}
		}
		if len(mem) == 0 || len(non) == 0 {
			return fmt.Errorf("attacks: LiRA: %s has no defined member or non-member score", s.prefix)
		}
		if err := MembershipAlpha(rep, s.prefix, mem, non, bound, BoundAlpha/3); err != nil {
			return err
		}
	}
	n := 0
	for _, u := range undefined {
		if u {
			n++
		}
	}
	rep.Results["lira_undefined"] = float64(n)
	return nil
}

// LiRAPooled computes LiRA for every model of a group in turn, with the
// others as its shadows, pools the scores of all targets (each example
// once per target, member or not as that target trained) and adds the
// metrics of one ROC over the pool to rep (MembershipAlpha, without a
// bound check): lira_pooled_online_, lira_pooled_offline_ (fixed
// variance) and lira_pooled_online_pe_ (per-example variance). A
// per-run ROC over a pool of a few hundred examples cannot read a TPR at
// 1% FPR from the handful of non-members above its threshold; k targets
// give k times the non-members. With one threshold for all targets, the
// pooled FPR (TPR) is the mean of the targets' own FPRs (TPRs) at that
// threshold, weighted by their non-member (member) counts. The pooled
// samples are not independent (the targets share
// examples and are each other's shadows), so their intervals are
// approximate and the bound check stays with the per-run metrics
// (LiRAGroup). Undefined scores are left out, as in LiRAGroup.
// LiRAPooled returns an error if there are fewer than 3 models or a
// score has no defined member or non-member.
func LiRAPooled(rep *Report, models []LiRAModel) error {
	if len(models) < 3 {
		return fmt.Errorf("attacks: LiRA needs at least 2 shadow runs (runs of the same configuration at other seeds), has %d", len(models)-1)
	}
	if rep.Results == nil {
		rep.Results = map[string]float64{}
	}
	sets := []struct {
		prefix   string
		mem, non []float64
	}{{prefix: "lira_pooled_online_"}, {prefix: "lira_pooled_offline_"}, {prefix: "lira_pooled_online_pe_"}}
	for target, m := range models {
		online, offline := LiRAScores(models, target, true)
		onlinePE, _ := LiRAScores(models, target, false)
		for k, score := range [][]float64{online, offline, onlinePE} {
			for i, v := range score {
				switch {
				case math.IsNaN(v):
				case m.In[i]:
					sets[k].mem = append(sets[k].mem, v)
				default:
					sets[k].non = append(sets[k].non, v)
				}
			}
		}
	}
	for _, s := range sets {
		if len(s.mem) == 0 || len(s.non) == 0 {
			return fmt.Errorf("attacks: LiRA: %s has no defined member or non-member score", s.prefix)
		}
		if err := MembershipAlpha(rep, s.prefix, s.mem, s.non, nil, BoundAlpha); err != nil {
			return err
		}
	}
	return nil
}

// AuditRunsThreshold is the multi-run audit's threshold on a run's
// logit-scaled confidence in the canary's answer: log(0.1/0.9), a
// probability of 0.1. It was fixed on a pilot disjoint from every audited
// run: 6 non-private smoke runs of shapes-vqa-lira at seeds 101–106 gave
// the canary's answer log-odds −0.20 to −0.28 when they trained on it and
// −7.8 to −10.7 when they did not; 0.1 sits between the two in log-odds,
// and a model that never saw the canary gives an answer of another kind
// to its question far less often.
const AuditRunsThreshold = -2.1972245773362196 // log(1/9)

// A MultiRunAudit is the outcome of the multi-run audit of one canary.
type MultiRunAudit struct {
	// In and Out are the numbers of runs that trained with and without the
	// canary; TruePos and FalsePos how many of them guessed it in.
	In, Out, TruePos, FalsePos int
	// Epsilon is the accounted ε, Lower the ε lower bound at
	// AuditConfidence; Pass is Lower ≤ Epsilon.
	Epsilon, Lower float64
	Pass           bool
}

// AuditRuns is the classic multi-run audit (Jagielski, Ullman & Oprea
// 2020; Nasr et al. 2021) of a mechanism accounted at (eps, delta): each
// of several independently trained runs either trained with the canary
// (in[j]) or not, and the attack guesses "in" when the run's
// logit-scaled confidence in the canary's (mislabelled) answer exceeds
// AuditRunsThreshold. The threshold is fixed in advance and each guess
// uses one run alone, so the guesses of different runs are independent
// given their memberships. With TPR and FPR the rates of guessing in
// among the runs with and without the canary, (ε, δ)-DP implies TPR ≤ e^ε·FPR + δ and 1 − FPR ≤ e^ε·(1 − TPR)
// + δ, so
//
//	ε ≥ max(log((TPR_lo − δ)/FPR_hi), log((TNR_lo − δ)/FNR_hi)),
//
// with each of the four rates replaced by its one-sided Clopper–Pearson
// limit at level (1 − AuditConfidence)/4, which makes the bound hold with
// probability AuditConfidence (union bound). Lower is 0 when neither side
// gives a positive bound. It panics if the lengths differ, or if there is
// no run with or no run without the canary.
//
// References:
//   - M. Jagielski, J. Ullman, A. Oprea, Auditing differentially private
//     machine learning: how private is private SGD?, NeurIPS 2020.
//   - M. Nasr, S. Song, A. Thakurta, N. Papernot, N. Carlini, Adversary
//     instantiation: lower bounds for differentially private machine
//     learning, IEEE S&P 2021.
func AuditRuns(conf []float64, in []bool, eps, delta float64) MultiRunAudit {
	if len(conf) != len(in) {
		panic("attacks: multi-run audit needs one membership per run")
	}
	a := MultiRunAudit{Epsilon: eps}
	for j, c := range conf {
		guess := c > AuditRunsThreshold
		if in[j] {
			a.In++
			a.TruePos += int(b2f(guess))
		} else {
			a.Out++
			a.FalsePos += int(b2f(guess))
		}
	}
	if a.In == 0 || a.Out == 0 {
		panic("attacks: multi-run audit needs runs with and runs without the canary")
	}
	level := (1 - AuditConfidence) / 4
	tprLo, _ := ClopperPearson(a.TruePos, a.In, level)
	_, fprHi := ClopperPearson(a.FalsePos, a.Out, level)
	tnrLo, _ := ClopperPearson(a.Out-a.FalsePos, a.Out, level)
	_, fnrHi := ClopperPearson(a.In-a.TruePos, a.In, level)
	for _, r := range [][2]float64{{tprLo, fprHi}, {tnrLo, fnrHi}} {
		if r[0] > delta {
			a.Lower = max(a.Lower, math.Log((r[0]-delta)/r[1]))
		}
	}
	a.Pass = !(a.Lower > eps)
	return a
}
