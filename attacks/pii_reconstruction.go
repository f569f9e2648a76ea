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
// perplexity is the prediction. Names are two tokens each, so every filled
// record has the same length and the least perplexity is the least
// log-likelihood loss of the text from the mask on (the prefix is
// common).
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
	truth  Name
	cands  []Name // the candidate list, truth at a random place
	prefix nn.Sequence
}

// fill returns the record's tokens from the first mask on with n in every
// masked mention.
func (r *reconTarget) fill(n Name) []int {
	out := slices.Clone(r.toks[r.at[0]:])
	for _, s := range r.at {
		out[s-r.at[0]], out[s-r.at[0]+1] = n[0], n[1]
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
	var out []reconTarget
	for _, r := range d.Records {
		if len(out) == n {
			break
		}
		if len(r.Names) == 0 {
			continue
		}
		s0 := r.Names[0]
		truth := Name{r.Tokens[s0], r.Tokens[s0+1]}
		rt := reconTarget{toks: r.Tokens, truth: truth, cands: []Name{truth},
			prefix: nn.Sequence{Tokens: r.Tokens[:s0]}}
		for _, s := range r.Names {
			if (Name{r.Tokens[s], r.Tokens[s+1]}) == truth {
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
// candidate list and among Rap-FT RA's sampled candidates (the zero Name
// when the samples hold none).
func (a PIIReconstruction) predict(ctx context.Context, m *nn.TinyMLLM, vt nn.VisualTransform, targets []reconTarget, d *PIIData, workers int) (list, ra []Name, err error) {
	list, ra = make([]Name, len(targets)), make([]Name, len(targets))
	first, sur := tokenSet(d.First), tokenSet(d.Surnames)
	ns := cmp.Or(a.RASamples, 16)
	err = parallel.For(len(targets), workers, func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := &targets[i]
		var err error
		if list[i], err = best(m, vt, r, r.cands); err != nil {
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
			for _, n := range TagNames(toks, first, sur) {
				if !slices.Contains(cands, n) {
					cands = append(cands, n)
				}
			}
		}
		if len(cands) > 0 {
			if ra[i], err = best(m, vt, r, cands); err != nil {
				return fmt.Errorf("attacks: pii-reconstruction: %w", err)
			}
		}
		return nil
	})
	return list, ra, err
}

// best returns the candidate whose filled record has the least loss from
// the mask on under m (the first on ties).
func best(m *nn.TinyMLLM, vt nn.VisualTransform, r *reconTarget, cands []Name) (Name, error) {
	conts := make([][]int, len(cands))
	for j, c := range cands {
		conts[j] = r.fill(c)
	}
	scores, err := scoreCandidates(m, vt, &r.prefix, conts)
	if err != nil {
		return Name{}, err
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
