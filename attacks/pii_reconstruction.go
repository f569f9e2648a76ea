// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/repro-dp/repro/internal/parallel"
	"github.com/repro-dp/repro/nn"
)

// PIIReconstruction is masked-PII reconstruction (Lukas et al., IEEE S&P
// 2023, §IV-B, PII reconstruction; Rap-FT's RA): in a private training
// record the first name mention is masked (with every other mention of the
// same name), each candidate name is filled in, and the candidate of least
// perplexity is the prediction: the perplexity of the whole filled record
// (after its first token), so that candidates of different token lengths
// compare fairly (names are spelled with sub-word pieces).
//
// Two candidate sets are scored:
//   - the candidate list: the true name and Distractors names drawn from
//     the private name lists, disjoint from the public lists the base was
//     pretrained on, so the answer cannot come from pretraining. Results
//     recon_top1 (target), recon_base_top1 (base model), recon_chance
//     (1/(Distractors+1)).
//   - Rap-FT's RA: the names tagged in RASamples top-k (k = 40)
//     continuations of 32 tokens sampled from the prefix, by each model
//     from its own samples. Results ra_top1 (RapFTRA, skipping targets
//     the base model reconstructs, as Lukas' evaluation does),
//     ra_targets (targets counted), ra_base_top1.
type PIIReconstruction struct {
	// Targets is the number of records attacked (the first ones with a
	// name); 0 means 64.
	Targets int
	// Distractors is the number of wrong names in the candidate list; 0
	// means 9.
	Distractors int
	// RASamples is the number of sampled continuations per target for
	// RA candidates; 0 means 16 (Rap-FT: 64).
	RASamples int
	// Seed seeds the distractors and the samples.
	Seed uint64
}

// Name implements Attack.
func (PIIReconstruction) Name() string { return "pii-reconstruction" }

// reconTarget is one masked record.
type reconTarget struct {
	toks   []int // the record
	at     []int // starts of the masked mentions, increasing
	width  int   // the tokens of each masked mention
	truth  Name
	cands  []Name // the candidate list, truth at a random place
	prefix nn.Sequence
}

// fill returns the record's tokens from the first mask on with the tokens
// name in every masked mention.
func (r *reconTarget) fill(name []int) []int {
	var out []int
	for k, s := range r.at {
		out = append(out, name...)
		end := len(r.toks)
		if k+1 < len(r.at) {
			end = r.at[k+1]
		}
		out = append(out, r.toks[s+r.width:end]...)
	}
	return out
}

// Run implements Attack.
func (a PIIReconstruction) Run(ctx context.Context, t *Target) (*Report, error) {
	if t.Model == nil || t.PII == nil || len(t.PII.Records) == 0 {
		return nil, fmt.Errorf("attacks: pii-reconstruction: needs a model and a task with personal data (records)")
	}
	targets, err := a.targets(t.PII)
	if err != nil {
		return nil, err
	}
	rep := &Report{Results: map[string]float64{}}
	d := cmp.Or(a.Distractors, 9)
	rep.Results["recon_chance"] = 1 / float64(d+1)
	pred, ra, err := a.predict(ctx, t.Model, t.Visual, targets, t.PII, t.Workers)
	if err != nil {
		return nil, err
	}
	truth := make([]Name, len(targets))
	for i, r := range targets {
		truth[i] = r.truth
	}
	rep.Results["recon_top1"], _ = RapFTRA(pred, nil, truth, false)
	if t.Base == nil {
		rep.Warnings = append(rep.Warnings, "pii-reconstruction: no base model: no control and no Rap-FT RA")
		return rep, nil
	}
	basePred, baseRA, err := a.predict(ctx, t.Base, nil, targets, t.PII, t.Workers)
	if err != nil {
		return nil, fmt.Errorf("attacks: pii-reconstruction: base model: %w", err)
	}
	rep.Results["recon_base_top1"], _ = RapFTRA(basePred, nil, truth, false)
	var n int
	rep.Results["ra_top1"], n = RapFTRA(ra, baseRA, truth, true)
	rep.Results["ra_targets"] = float64(n)
	rep.Results["ra_base_top1"], _ = RapFTRA(baseRA, nil, truth, false)
	return rep, nil
}

// targets picks the attacked records and draws their candidate lists.
func (a PIIReconstruction) targets(d *PIIData) ([]reconTarget, error) {
	if len(d.PrivateFirst) == 0 || len(d.PrivateSurnames) == 0 {
		return nil, fmt.Errorf("attacks: pii-reconstruction: no private name lists")
	}
	n := cmp.Or(a.Targets, 64)
	nd := cmp.Or(a.Distractors, 9)
	if nd+1 > len(d.PrivateFirst)*len(d.PrivateSurnames) {
		return nil, fmt.Errorf("attacks: pii-reconstruction: %d distractors, the private lists hold fewer names", nd)
	}
	rng := rand.New(rand.NewPCG(a.Seed, 0x7265636f6e)) // "recon"
	tg := d.Tagger()
	var out []reconTarget
	for _, r := range d.Records {
		if len(out) == n {
			break
		}
		if len(r.Names) == 0 {
			continue
		}
		s0 := r.Names[0]
		truth, width, ok := tg.At(r.Tokens, s0)
		if !ok || s0 == 0 {
			return nil, fmt.Errorf("attacks: pii-reconstruction: record %d: no name from the lists at token %d, or no prefix", r.ID, s0)
		}
		rt := reconTarget{toks: r.Tokens, width: width, truth: truth, cands: []Name{truth},
			prefix: nn.Sequence{Tokens: r.Tokens[:s0]}}
		for _, s := range r.Names {
			if n, _, ok := tg.At(r.Tokens, s); ok && n == truth && (len(rt.at) == 0 || s >= rt.at[len(rt.at)-1]+width) {
				rt.at = append(rt.at, s)
			}
		}
		for len(rt.cands) < nd+1 {
			c := Name{d.PrivateFirst[rng.IntN(len(d.PrivateFirst))], d.PrivateSurnames[rng.IntN(len(d.PrivateSurnames))]}
			if !slices.Contains(rt.cands, c) {
				rt.cands = append(rt.cands, c)
			}
		}
		// The truth at a random place: ties (first wins) do not favour it.
		j := rng.IntN(len(rt.cands))
		rt.cands[0], rt.cands[j] = rt.cands[j], rt.cands[0]
		out = append(out, rt)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("attacks: pii-reconstruction: no record has a name")
	}
	return out, nil
}

// predict returns, for each target, m's least-perplexity name among the
// candidate list and among Rap-FT RA's sampled candidates (noName when
// the samples hold none).
func (a PIIReconstruction) predict(ctx context.Context, m *nn.TinyMLLM, vt nn.VisualTransform, targets []reconTarget, d *PIIData, workers int) (list, ra []Name, err error) {
	list, ra = make([]Name, len(targets)), make([]Name, len(targets))
	for i := range ra {
		ra[i] = noName
	}
	tg := d.Tagger()
	ns := cmp.Or(a.RASamples, 16)
	err = parallel.For(len(targets), workers, func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := &targets[i]
		var err error
		if list[i], err = best(m, vt, r, r.cands, d); err != nil {
			return fmt.Errorf("attacks: pii-reconstruction: %w", err)
		}
		prompts := make([]nn.Sequence, ns)
		rngs := make([]*rand.Rand, ns)
		for j := range prompts {
			prompts[j] = r.prefix
			rngs[j] = rand.New(rand.NewPCG(a.Seed, uint64(i*ns+j)))
		}
		g, err := m.GenerateBatch(prompts, 32, nn.Sampler{TopK: 40, Temperature: 1}, rngs, vt)
		if err != nil {
			return fmt.Errorf("attacks: pii-reconstruction: %w", err)
		}
		var cands []Name
		for _, toks := range g {
			for _, n := range tg.Tag(toks) {
				if !slices.Contains(cands, n) {
					cands = append(cands, n)
				}
			}
		}
		if len(cands) > 0 {
			if ra[i], err = best(m, vt, r, cands, d); err != nil {
				return fmt.Errorf("attacks: pii-reconstruction: %w", err)
			}
		}
		return nil
	})
	return list, ra, err
}

// noName is the RA prediction of a target whose samples hold no name: it
// is no name of the lists, so it never equals a truth.
var noName = Name{-1, -1}

// best returns the candidate (names of d) whose filled record has the
// least perplexity under m (the first on ties): the least mean negative
// log-likelihood of the record's tokens after the first, (P + S_c) /
// (len(prefix) − 1 + len(c)), where P is the loss of the prefix after its
// first token (common to all) and S_c the loss of the filled rest c.
func best(m *nn.TinyMLLM, vt nn.VisualTransform, r *reconTarget, cands []Name, d *PIIData) (Name, error) {
	conts := make([][]int, len(cands))
	for j, c := range cands {
		conts[j] = r.fill(d.tokens(c))
	}
	scores, err := scoreCandidates(m, vt, &r.prefix, conts)
	if err != nil {
		return Name{}, err
	}
	p := r.prefix.Tokens
	var prefixLoss float64
	if len(p) > 1 {
		l, err := scoreCandidates(m, vt, &nn.Sequence{Tokens: p[:1], Images: r.prefix.Images}, [][]int{p[1:]})
		if err != nil {
			return Name{}, err
		}
		prefixLoss = l[0]
	}
	for j := range scores {
		scores[j] = (prefixLoss + scores[j]) / float64(len(p)-1+len(conts[j]))
	}
	return cands[argmin(scores)], nil
}

// argmin returns the index of the least value, the first on ties.
func argmin(x []float64) int {
	b := 0
	for i, v := range x {
		if v < x[b] {
			b = i
		}
	}
	return b
}
