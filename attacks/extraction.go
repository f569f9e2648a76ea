// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/repro-dp/repro/internal/parallel"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/nn"
)

func init() { Register(CanaryExposure{}) }

// A Secret is a canary of a generative task (Carlini et al. 2019): a prompt
// followed by secret tokens drawn uniformly and independently from
// Alphabet, inserted Reps times into the training set (0: a reference
// canary drawn the same way and never inserted).
type Secret struct {
	// ID is the canary's index in its dataset (the example_id of its
	// scores).
	ID     int64
	Prompt nn.Sequence
	Secret []int
	Reps   int
	// Alphabet are the tokens each secret position is drawn from: the
	// candidate space R is Alphabet^len(Secret).
	Alphabet []int
}

// space returns |R| as a float.
func (s *Secret) space() float64 {
	return math.Pow(float64(len(s.Alphabet)), float64(len(s.Secret)))
}

// index returns the position of the secret in the lexicographic order of
// R (the order of enumerate's scores), or −1 if a token is not in the
// alphabet.
func (s *Secret) index() int {
	idx := 0
	for _, tok := range s.Secret {
		a := slices.Index(s.Alphabet, tok)
		if a < 0 {
			return -1
		}
		idx = idx*len(s.Alphabet) + a
	}
	return idx
}

// enumBatch is the largest number of sequences decoded in one batch.
const enumBatch = 1024

// enumerate returns the log-perplexity −log P(x | prompt) (in nats) under
// m of every candidate x of Alphabet^length, in lexicographic order of
// the alphabet's indices (see walk), on up to workers goroutines.
func enumerate(m *nn.TinyMLLM, vt nn.VisualTransform, prompt *nn.Sequence, alphabet []int, length, workers int) ([]float64, error) {
	n := 1
	for range length {
		n *= len(alphabet)
	}
	out := make([]float64, n)
	err := walk(m, vt, prompt, alphabet, length, math.Inf(1), workers, func(idx int, score float64) { out[idx] = score })
	return out, err
}

// enode is a node of the candidates' prefix tree: its cache (the prompt
// and the node's tokens), the log-probabilities of the alphabet's tokens
// next, its log-perplexity so far and its index (its path in base A).
type enode struct {
	c     *nn.KVCache
	lp    []float64
	score float64
	idx   int
}

// walk calls leaf(idx, score) for every candidate of Alphabet^length
// whose log-perplexity after prompt under m is at most bound, with its
// index in lexicographic order. Log-perplexity only grows along a path
// (every token adds −log p ≥ 0), so subtrees whose prefix is already
// above bound are skipped: with a small bound (a well-memorised secret)
// the walk visits a few nodes, with +Inf every node once. The tree is
// decoded level by level in batches of up to enumBatch nodes with a KV
// cache, one cached position per node, depth first over batches so at
// most enumBatch·A caches per level are alive. The subtrees of the first
// token are walked on up to workers goroutines, so leaf is called
// concurrently, never twice with the same idx.
func walk(m *nn.TinyMLLM, vt nn.VisualTransform, prompt *nn.Sequence, alphabet []int, length int, bound float64, workers int, leaf func(idx int, score float64)) error {
	c := m.NewKVCache()
	z, err := m.Prefill(c, prompt, vt)
	if err != nil {
		return err
	}
	newWalker := func() *walker {
		return &walker{m: m, alphabet: alphabet, bound: bound, leaf: leaf, row: make([]float64, m.Config.Vocab)}
	}
	w := newWalker()
	root := enode{c: c, lp: w.alphabetLP(z.Data)}
	if length == 1 {
		return w.expand([]enode{root}, length)
	}
	return parallel.For(len(alphabet), workers, func(a int) error {
		score := -root.lp[a]
		if score > bound {
			return nil
		}
		kid := root.c.Clone()
		zs, err := m.Extend([]*nn.KVCache{kid}, [][]int{{alphabet[a]}})
		if err != nil {
			return err
		}
		w := newWalker()
		return w.expand([]enode{{c: kid, lp: w.alphabetLP(zs[0].Data), score: score, idx: a}}, length-1)
	})
}

// walker holds the state of one walk.
type walker struct {
	m        *nn.TinyMLLM
	alphabet []int
	bound    float64
	leaf     func(idx int, score float64)
	row      []float64
}

// alphabetLP returns the log-softmax of logits z at the alphabet's tokens.
func (w *walker) alphabetLP(z []float32) []float64 {
	logSoftmax(w.row, z)
	lp := make([]float64, len(w.alphabet))
	for a, tok := range w.alphabet {
		lp[a] = w.row[tok]
	}
	return lp
}

// expand visits the subtrees of nodes, which have r tokens still to
// choose.
func (w *walker) expand(nodes []enode, r int) error {
	A := len(w.alphabet)
	if r == 1 {
		for _, nd := range nodes {
			for a := range A {
				if s := nd.score - nd.lp[a]; s <= w.bound {
					w.leaf(nd.idx*A+a, s)
				}
			}
		}
		return nil
	}
	type kid struct{ parent, a int }
	var kids []kid
	for i, nd := range nodes {
		for a := range A {
			if nd.score-nd.lp[a] <= w.bound {
				kids = append(kids, kid{i, a})
			}
		}
	}
	for lo := 0; lo < len(kids); lo += enumBatch {
		hi := min(lo+enumBatch, len(kids))
		caches := make([]*nn.KVCache, hi-lo)
		toks := make([][]int, hi-lo)
		for j, k := range kids[lo:hi] {
			caches[j], toks[j] = nodes[k.parent].c.Clone(), []int{w.alphabet[k.a]}
		}
		zs, err := w.m.Extend(caches, toks)
		if err != nil {
			return err
		}
		next := make([]enode, hi-lo)
		for j, k := range kids[lo:hi] {
			p := &nodes[k.parent]
			next[j] = enode{c: caches[j], lp: w.alphabetLP(zs[j].Data), score: p.score - p.lp[k.a], idx: p.idx*A + k.a}
		}
		if err := w.expand(next, r-1); err != nil {
			return err
		}
	}
	return nil
}

// scoreCandidates returns the log-perplexity −log P(x | prompt) in nats of
// each candidate continuation x under m, decoded in batches from one
// cached prompt.
func scoreCandidates(m *nn.TinyMLLM, vt nn.VisualTransform, prompt *nn.Sequence, cands [][]int) ([]float64, error) {
	c := m.NewKVCache()
	z, err := m.Prefill(c, prompt, vt)
	if err != nil {
		return nil, err
	}
	V := m.Config.Vocab
	lp0 := make([]float64, V)
	logSoftmax(lp0, z.Data)
	out := make([]float64, len(cands))
	row := make([]float64, V)
	for lo := 0; lo < len(cands); lo += enumBatch {
		hi := min(lo+enumBatch, len(cands))
		caches := make([]*nn.KVCache, 0, hi-lo)
		toks := make([][]int, 0, hi-lo)
		for i := lo; i < hi; i++ {
			out[i] = -lp0[cands[i][0]]
			if len(cands[i]) > 1 {
				caches = append(caches, c.Clone())
				toks = append(toks, cands[i][:len(cands[i])-1])
			}
		}
		if len(caches) == 0 {
			continue
		}
		zs, err := m.Extend(caches, toks)
		if err != nil {
			return nil, err
		}
		k := 0
		for i := lo; i < hi; i++ {
			if len(cands[i]) == 1 {
				continue
			}
			for j := 1; j < len(cands[i]); j++ {
				logSoftmax(row, zs[k].Data[(j-1)*V:j*V])
				out[i] -= row[cands[i][j]]
			}
			k++
		}
	}
	return out, nil
}

// CanaryExposure is the canary exposure attack of Carlini et al., "The
// Secret Sharer: Evaluating and Testing Unintended Memorization in Neural
// Networks" (USENIX Security 2019): every secret of the target is ranked
// by its log-perplexity among its candidate space (the other secrets
// inserted into the same space left out, so that canaries memorised
// together do not cap each other's exposure), exactly by enumerating
// the space when it has at most MaxEnumerate candidates, and always by the
// skew-normal extrapolation from Samples uniformly drawn candidates.
//
// Results: exposure_max (log₂|R|), exposure_rep<r> and
// exposure_extrap_rep<r> (mean exact and extrapolated exposure of the
// canaries inserted r times; r = 0 are the reference canaries, drawn like
// the others but never inserted: the control, whose rank is uniform, so
// that its exposure −log₂(rank/|R|) is −log₂ U for U uniform on (0, 1],
// 1/ln 2 ≈ 1.44 bits on average). Scores: each canary's exposure (attack "exposure", member:
// inserted) and extrapolated exposure ("exposure-extrap").
type CanaryExposure struct {
	// MaxEnumerate is the largest space that is enumerated; 0 means
	// 2²⁰ (the six-digit secrets of package datasets, 10⁶, are).
	MaxEnumerate float64
	// Samples is the number of candidates the extrapolation fits; 0
	// means 2000.
	Samples int
	// Seed seeds the candidate draws.
	Seed uint64
}

// Name implements Attack.
func (CanaryExposure) Name() string { return "exposure" }

// exposureOf is one secret's result.
type exposureOf struct {
	exact, extrap float64 // NaN: not computed
}

// Run implements Attack.
func (a CanaryExposure) Run(ctx context.Context, t *Target) (*Report, error) {
	if t.Model == nil {
		return nil, fmt.Errorf("attacks: exposure: no model")
	}
	if len(t.Secrets) == 0 {
		return nil, fmt.Errorf("attacks: exposure: the task has no secret canaries")
	}
	rep := &Report{Results: map[string]float64{}}
	target, err := a.exposures(ctx, t.Model, t.Visual, t.Secrets, t.Workers)
	if err != nil {
		return nil, err
	}
	a.summarise(rep, "exposure", t.Secrets, target)
	for i, s := range t.Secrets {
		rep.Scores = append(rep.Scores,
			results.Score{Attack: "exposure", ExampleID: s.ID, Member: s.Reps > 0, Score: target[i].exact},
			results.Score{Attack: "exposure-extrap", ExampleID: s.ID, Member: s.Reps > 0, Score: target[i].extrap})
	}
	maxExp := 0.0
	for i := range t.Secrets {
		maxExp = max(maxExp, math.Log2(t.Secrets[i].space()))
	}
	rep.Results["exposure_max"] = maxExp
	if math.IsNaN(target[0].exact) {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("exposure: candidate space of %.3g secrets is larger than %.3g: extrapolated exposure only", t.Secrets[0].space(), a.maxEnumerate()))
	}
	return rep, nil
}

func (a CanaryExposure) maxEnumerate() float64 { return cmp.Or(a.MaxEnumerate, 1<<20) }

// summarise adds the mean exact and extrapolated exposure per repetition
// count to rep, named prefix_rep<r> and prefix_extrap_rep<r> (the exact
// one only when computed).
func (a CanaryExposure) summarise(rep *Report, prefix string, secrets []Secret, ex []exposureOf) {
	type acc struct{ exact, extrap, n float64 }
	by := map[int]*acc{}
	for i, s := range secrets {
		if by[s.Reps] == nil {
			by[s.Reps] = &acc{}
		}
		b := by[s.Reps]
		b.exact += ex[i].exact
		b.extrap += ex[i].extrap
		b.n++
	}
	for r, b := range by {
		if !math.IsNaN(b.exact) {
			rep.Results[fmt.Sprintf("%s_rep%d", prefix, r)] = b.exact / b.n
		}
		rep.Results[fmt.Sprintf("%s_extrap_rep%d", prefix, r)] = b.extrap / b.n
	}
}

// exposures computes the exposure of every secret under m. The
// extrapolations are per secret, the secrets in parallel. The exact ranks
// come from one walk per group of secrets that share their prompt and
// candidate space (a task's canaries do), bounded by the group's largest
// secret score: a secret's rank counts the leaves at or below its own
// score (other than the group's inserted secrets), which are the leaves a
// walk bounded by that score visits, so one walk serves the whole group.
// No result depends on workers.
func (a CanaryExposure) exposures(ctx context.Context, m *nn.TinyMLLM, vt nn.VisualTransform, secrets []Secret, workers int) ([]exposureOf, error) {
	out := make([]exposureOf, len(secrets))
	scores := make([]float64, len(secrets))
	err := parallel.For(len(secrets), workers, func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		out[i].exact = math.NaN()
		out[i].extrap, scores[i], err = a.extrapolate(m, vt, &secrets[i])
		if err != nil {
			return fmt.Errorf("attacks: exposure of canary %d: %w", secrets[i].ID, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, group := range sameSpace(secrets) {
		s := &secrets[group[0]]
		if s.space() > a.maxEnumerate() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		bound := math.Inf(-1)
		for _, i := range group {
			bound = max(bound, scores[i])
		}
		leaves := make([]float64, int(s.space()))
		for i := range leaves {
			leaves[i] = math.Inf(1)
		}
		err := walk(m, vt, &s.Prompt, s.Alphabet, len(s.Secret), bound, workers, func(idx int, score float64) { leaves[idx] = score })
		if err != nil {
			return nil, fmt.Errorf("attacks: exposure of canary %d: %w", s.ID, err)
		}
		// A secret's rank counts neither itself nor the inserted secrets
		// of its space: memorised together, k canaries of one space would
		// otherwise cap each other's exposure at log₂(|R|/k), while
		// exposure is the secret's rank among random candidates (Carlini
		// et al. insert one canary per space). Leaving k of |R| candidates
		// out overstates no exposure by more than log₂(|R|/(|R|−k)) bits
		// (1.7e-5 for 12 canaries among 10⁶).
		skip := map[int]bool{}
		for _, o := range group {
			if secrets[o].Reps > 0 {
				skip[secrets[o].index()] = true
			}
		}
		for _, i := range group {
			idx, rank := secrets[i].index(), 1
			for j, score := range leaves {
				if score <= scores[i] && j != idx && !skip[j] {
					rank++
				}
			}
			out[i].exact = Exposure(float64(rank), s.space())
		}
	}
	return out, nil
}

// extrapolate returns a secret's extrapolated exposure, fitted to the
// scores of Samples candidates drawn uniformly (with replacement), and
// the secret's own log-perplexity.
func (a CanaryExposure) extrapolate(m *nn.TinyMLLM, vt nn.VisualTransform, s *Secret) (exposure, score float64, err error) {
	if s.index() < 0 || len(s.Secret) == 0 {
		return 0, 0, fmt.Errorf("secret %v is not a string over the alphabet %v", s.Secret, s.Alphabet)
	}
	rng := rand.New(rand.NewPCG(a.Seed, uint64(s.ID)))
	ns := cmp.Or(a.Samples, 2000)
	cands := make([][]int, ns+1)
	cands[0] = s.Secret
	for i := 1; i <= ns; i++ {
		cands[i] = make([]int, len(s.Secret))
		for j := range cands[i] {
			cands[i][j] = s.Alphabet[rng.IntN(len(s.Alphabet))]
		}
	}
	scores, err := scoreCandidates(m, vt, &s.Prompt, cands)
	if err != nil {
		return 0, 0, err
	}
	exposure, _, err = ExtrapolatedExposure(scores[1:], scores[0])
	return exposure, scores[0], err
}

// sameSpace returns the indices of secrets grouped by candidate space:
// the same prompt (tokens and images), alphabet and length, in order of
// first appearance.
func sameSpace(secrets []Secret) [][]int {
	same := func(a, b *Secret) bool {
		return len(a.Secret) == len(b.Secret) && slices.Equal(a.Alphabet, b.Alphabet) &&
			slices.Equal(a.Prompt.Tokens, b.Prompt.Tokens) &&
			slices.EqualFunc(a.Prompt.Images, b.Prompt.Images, slices.Equal[[]float32])
	}
	var groups [][]int
next:
	for i := range secrets {
		for g, group := range groups {
			if same(&secrets[group[0]], &secrets[i]) {
				groups[g] = append(group, i)
				continue next
			}
		}
		groups = append(groups, []int{i})
	}
	return groups
}
