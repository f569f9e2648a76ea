// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/repro-dp/repro/nn"
)

func init() {
	Register(PIIExtraction{})
	Register(PIIReconstruction{})
}

// A Name is a person's name as the indices of its first name in
// PIIData.First and of its surname in PIIData.Surnames.
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
	// First and Surnames are the token sequences of every first name and
	// surname the generator knows (public and private lists, each
	// sequence non-empty, no two alike): a first name followed by a
	// surname is a name mention (the tagger, exact by construction, that
	// stands in for the papers' NER). Records spell names with sub-word
	// pieces, so one name is several tokens.
	First, Surnames [][]int
	// PrivateFirst and PrivateSurnames are the indices in First and
	// Surnames of the private lists, disjoint from the public ones the
	// base model was pretrained on: the pool of reconstruction
	// distractors.
	PrivateFirst, PrivateSurnames []int
}

// A Record is a private training sequence with its name mentions.
type Record struct {
	ID     int64
	Tokens []int
	// Names are the starts of its name mentions, in order; the tagger
	// must find a name at each.
	Names []int
}

// A Tagger finds name mentions in token sequences: a first name's tokens
// followed by a surname's. Where several first names or surnames match at
// one place, the longest wins. A Tagger is safe for concurrent use.
type Tagger struct {
	first, sur       map[string]int // token sequence key → list index
	firstLen, surLen []int          // the distinct lengths, longest first
}

// NewTagger returns the tagger of the first names and surnames given as
// token sequences; Name{i, j} is first[i] followed by surnames[j].
func NewTagger(first, surnames [][]int) *Tagger {
	t := &Tagger{first: make(map[string]int), sur: make(map[string]int)}
	index := func(m map[string]int, lens *[]int, seqs [][]int) {
		for i, s := range seqs {
			m[seqKey(s)] = i
			if !slices.Contains(*lens, len(s)) {
				*lens = append(*lens, len(s))
			}
		}
		slices.SortFunc(*lens, func(a, b int) int { return b - a })
	}
	index(t.first, &t.firstLen, first)
	index(t.sur, &t.surLen, surnames)
	return t
}

// seqKey returns a map key of a token sequence.
func seqKey(s []int) string {
	b := make([]byte, 0, 4*len(s))
	for _, x := range s {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return string(b)
}

// match returns the index of the longest sequence of m (lengths lens)
// that starts toks, and its length; ok is false when none does.
func match(m map[string]int, lens []int, toks []int) (i, n int, ok bool) {
	for _, n := range lens {
		if n > 0 && n <= len(toks) {
			if i, ok := m[seqKey(toks[:n])]; ok {
				return i, n, true
			}
		}
	}
	return 0, 0, false
}

// At returns the name mention that starts at toks[i] and its length in
// tokens; ok is false when none does.
func (t *Tagger) At(toks []int, i int) (n Name, length int, ok bool) {
	f, nf, ok := match(t.first, t.firstLen, toks[i:])
	if !ok {
		return Name{}, 0, false
	}
	s, ns, ok := match(t.sur, t.surLen, toks[i+nf:])
	if !ok {
		return Name{}, 0, false
	}
	return Name{f, s}, nf + ns, true
}

// Tag returns the name mentions in toks, in order, scanning from the left
// and going on after each mention.
func (t *Tagger) Tag(toks []int) []Name {
	var out []Name
	for i := 0; i < len(toks); i++ {
		if n, l, ok := t.At(toks, i); ok {
			out = append(out, n)
			i += l - 1
		}
	}
	return out
}

// Tagger returns a tagger of d's name lists.
func (d *PIIData) Tagger() *Tagger { return NewTagger(d.First, d.Surnames) }

// tokens returns the token sequence of n.
func (d *PIIData) tokens(n Name) []int {
	return slices.Concat(d.First[n[0]], d.Surnames[n[1]])
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

// trainNames returns every name mention of the records, in order; it
// fails when the tagger finds no name at a mention's start.
func (d *PIIData) trainNames() ([]Name, error) {
	var out []Name
	tg := d.Tagger()
	for _, r := range d.Records {
		for _, s := range r.Names {
			n, _, ok := tg.At(r.Tokens, s)
			if !ok {
				return nil, fmt.Errorf("attacks: record %d: no name from the lists at token %d", r.ID, s)
			}
			out = append(out, n)
		}
	}
	return out, nil
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
	train, err := t.PII.trainNames()
	if err != nil {
		return nil, err
	}
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
	tg := d.Tagger()
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
			out = append(out, tg.Tag(toks)...)
		}
	}
	g, err := m.GenerateBatch(d.Prompts, maxNew, nn.Sampler{}, nil, vt)
	if err != nil {
		return nil, fmt.Errorf("attacks: pii-extraction: %w", err)
	}
	for _, toks := range g {
		out = append(out, tg.Tag(toks)...)
	}
	return out, nil
}
