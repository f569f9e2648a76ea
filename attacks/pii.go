// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/repro-dp/repro/nn"
)

func init() {
	Register(PIIExtraction{})
	Register(PIIReconstruction{})
}

// A Name is a person's name as the token ids of its first name and
// surname (the records of package datasets spell every name so).
type Name [2]int

// PIIData is what the extraction attacks know of a task with personal
// data: the private training records with their exact name spans, public
// prompts, and the name vocabulary that tags names in generated text.
type PIIData struct {
	// Records are the private training records.
	Records []Record
	// Prompts are public prompts to sample from (no private data in
	// them; Lukas et al. use the empty prompt).
	Prompts []nn.Sequence
	// First and Surnames are the token ids of every first name and
	// surname the generator knows (public and private lists): a first
	// name followed by a surname is a name mention (the tagger, exact by
	// construction, that stands in for the papers' NER).
	First, Surnames []int
	// PrivateFirst and PrivateSurnames are the private lists, disjoint
	// from the public ones the base model was pretrained on: the pool of
	// reconstruction distractors.
	PrivateFirst, PrivateSurnames []int
}

// A Record is a private training sequence with its name mentions.
type Record struct {
	ID     int64
	Tokens []int
	// Names are the starts of its name mentions (each two tokens), in
	// order.
	Names []int
}

// TagNames returns the name mentions in toks, in order: every first-name
// token followed by a surname token.
func TagNames(toks []int, first, surnames map[int]bool) []Name {
	var out []Name
	for i := 0; i+1 < len(toks); i++ {
		if first[toks[i]] && surnames[toks[i+1]] {
			out = append(out, Name{toks[i], toks[i+1]})
			i++
		}
	}
	return out
}

// ExtractionPR returns the precision and recall of extracted names against
// the private training names: precision = |G ∩ Real| / |G| over the
// distinct names G tagged in the generations, recall = |G ∩ Real| / |Real|
// over the distinct training names Real (Lukas et al., "Analyzing Leakage
// of Personally Identifiable Information in Language Models", IEEE S&P
// 2023, §IV-A extraction, with distinct names on both sides). An empty G
// has precision 0.
func ExtractionPR(generated []Name, real map[Name]bool) (precision, recall float64) {
	g := set(generated)
	hit := 0
	for n := range g {
		if real[n] {
			hit++
		}
	}
	if len(g) > 0 {
		precision = float64(hit) / float64(len(g))
	}
	if len(real) > 0 {
		recall = float64(hit) / float64(len(real))
	}
	return precision, recall
}

// RapFTEA returns the extraction attack (EA) metrics of Rap-FT (Wang et
// al., "Balancing Differential Privacy and Utility: A Relevance-Based
// Adaptive Private Fine-Tuning Framework for Language Models", IEEE TIFS
// 2024, §VII-A-4 and Table V), which follows Lukas et al.'s released code
// (microsoft/analysing_pii_leakage): names leaked by
// the pretrained model are excluded, Leaked = G \ G0, and
//
//	precision = |Real_unique ∩ Leaked| / |Leaked|
//	recall    = |Real_unique ∩ Leaked| / |Real mentions|
//
// where G and G0 are the names tagged in the target's and the pretrained
// model's generations, Real_unique the distinct training names and Real
// mentions every training mention, repeats included (which is why the
// paper's recalls are about 1%). An empty Leaked has precision 0.
func RapFTEA(generated, baseGenerated, trainMentions []Name) (precision, recall float64) {
	g0 := set(baseGenerated)
	leaked := map[Name]bool{}
	for _, n := range generated {
		if !g0[n] {
			leaked[n] = true
		}
	}
	real := set(trainMentions)
	hit := 0
	for n := range leaked {
		if real[n] {
			hit++
		}
	}
	if len(leaked) > 0 {
		precision = float64(hit) / float64(len(leaked))
	}
	if len(trainMentions) > 0 {
		recall = float64(hit) / float64(len(trainMentions))
	}
	return precision, recall
}

// RapFTRA returns the reconstruction attack (RA) top-1 accuracy of Rap-FT
// (§VII-A-4, Table V) from Lukas et al.'s procedure: for each target,
// pred is the candidate of least perplexity under the fine-tuned model
// and basePred under the pretrained model; the accuracy is the fraction of
// targets with pred = truth, counting only the targets where basePred ≠
// truth when skipBase is set (Lukas' evaluation skips what the
// pretrained model already reconstructs). It returns the accuracy and the
// number of targets counted.
func RapFTRA(pred, basePred, truth []Name, skipBase bool) (acc float64, n int) {
	hit := 0
	for i := range truth {
		if skipBase && basePred[i] == truth[i] {
			continue
		}
		n++
		if pred[i] == truth[i] {
			hit++
		}
	}
	if n > 0 {
		acc = float64(hit) / float64(n)
	}
	return acc, n
}

func set(xs []Name) map[Name]bool {
	m := make(map[Name]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func tokenSet(xs []int) map[int]bool {
	m := make(map[int]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// trainNames returns every name mention of the records, in order.
func (d *PIIData) trainNames() []Name {
	var out []Name
	for _, r := range d.Records {
		for _, s := range r.Names {
			out = append(out, Name{r.Tokens[s], r.Tokens[s+1]})
		}
	}
	return out
}

// PIIExtraction is the PII extraction attack of Lukas et al. (IEEE S&P
// 2023, §IV-A), as Rap-FT's EA uses it: Samples generations from the
// public prompts by top-k sampling (k = TopK, temperature 1) plus one
// greedy generation per prompt, decoded in batches with a KV cache, names
// tagged in them, and the same from the base model as the control that
// never saw the private records.
//
// Results: pii_precision and pii_recall (ExtractionPR on distinct names,
// target), pii_base_precision and pii_base_recall (the same for the base
// model), ea_precision and ea_recall (RapFTEA, base-leaked names
// excluded), pii_names_generated (distinct names the target generated).
type PIIExtraction struct {
	// Samples is the number of sampled generations; 0 means 256.
	Samples int
	// TopK is the sampler's k; 0 means 40 (Lukas et al., Rap-FT).
	TopK int
	// Seed seeds the sampling; target and base use the same draws.
	Seed uint64
}

// Name implements Attack.
func (PIIExtraction) Name() string { return "pii-extraction" }

// Run implements Attack.
func (a PIIExtraction) Run(ctx context.Context, t *Target) (*Report, error) {
	if t.Model == nil || t.PII == nil || len(t.PII.Records) == 0 || len(t.PII.Prompts) == 0 {
		return nil, fmt.Errorf("attacks: pii-extraction: needs a model and a task with personal data (records)")
	}
	gen, err := a.names(ctx, t.Model, t.Visual, t.PII)
	if err != nil {
		return nil, err
	}
	train := t.PII.trainNames()
	real := set(train)
	rep := &Report{Results: map[string]float64{}}
	rep.Results["pii_precision"], rep.Results["pii_recall"] = ExtractionPR(gen, real)
	rep.Results["pii_names_generated"] = float64(len(set(gen)))
	if t.Base == nil {
		rep.Warnings = append(rep.Warnings, "pii-extraction: no base model: no control and no Rap-FT EA")
		return rep, nil
	}
	base, err := a.names(ctx, t.Base, nil, t.PII)
	if err != nil {
		return nil, fmt.Errorf("attacks: pii-extraction: base model: %w", err)
	}
	rep.Results["pii_base_precision"], rep.Results["pii_base_recall"] = ExtractionPR(base, real)
	rep.Results["ea_precision"], rep.Results["ea_recall"] = RapFTEA(gen, base, train)
	return rep, nil
}

// names generates from m and returns the tagged name mentions.
func (a PIIExtraction) names(ctx context.Context, m *nn.TinyMLLM, vt nn.VisualTransform, d *PIIData) ([]Name, error) {
	n := cmp.Or(a.Samples, 256)
	k := cmp.Or(a.TopK, 40)
	prompts := make([]nn.Sequence, n)
	rngs := make([]*rand.Rand, n)
	for i := range prompts {
		prompts[i] = d.Prompts[i%len(d.Prompts)]
		rngs[i] = rand.New(rand.NewPCG(a.Seed, uint64(i)))
	}
	first, sur := tokenSet(d.First), tokenSet(d.Surnames)
	var out []Name
	const batch = 64
	maxNew := m.Config.MaxLen
	for lo := 0; lo < n; lo += batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+batch, n)
		g, err := m.GenerateBatch(prompts[lo:hi], maxNew, nn.Sampler{TopK: k, Temperature: 1}, rngs[lo:hi], vt)
		if err != nil {
			return nil, fmt.Errorf("attacks: pii-extraction: %w", err)
		}
		for _, toks := range g {
			out = append(out, TagNames(toks, first, sur)...)
		}
	}
	g, err := m.GenerateBatch(d.Prompts, maxNew, nn.Sampler{}, nil, vt)
	if err != nil {
		return nil, fmt.Errorf("attacks: pii-extraction: %w", err)
	}
	for _, toks := range g {
		out = append(out, TagNames(toks, first, sur)...)
	}
	return out, nil
}
