// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"cmp"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

// perturbedModel returns a smoke TinyMLLM whose parameters are perturbed
// by N(0, 0.2²), so that candidates' likelihoods differ clearly.
func perturbedModel(t *testing.T) *nn.TinyMLLM {
	t.Helper()
	m := testModel(t)
	rng := rand.New(rand.NewPCG(4, 4))
	for _, p := range m.Params() {
		for i := range p.Data {
			p.Data[i] += float32(0.2 * rng.NormFloat64())
		}
	}
	return m
}

// slowScore is the reference log-perplexity of cand after prompt: the sum
// of the model's full-forward token losses (TokenLosses) over cand.
func slowScore(t *testing.T, m *nn.TinyMLLM, prompt, cand []int) float64 {
	t.Helper()
	toks := append(slices.Clone(prompt), cand...)
	loss := make([]bool, len(toks))
	for i := len(prompt); i < len(toks); i++ {
		loss[i] = true
	}
	ls, _, err := m.TokenLosses(&nn.Sequence{Tokens: toks, Loss: loss}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var s float64
	for _, l := range ls {
		s += l
	}
	return s
}

// TestEnumerate checks the cached prefix-tree enumeration of a candidate
// space against the slow reference, every candidate scored by a full
// forward pass: a space of 4⁶ = 4096 secrets (so both the per-node and the
// batched-leaves paths run), and scoreCandidates on a sample of it.
func TestEnumerate(t *testing.T) {
	t.Parallel()
	m := perturbedModel(t)
	v := datasets.Vocab()
	prompt := v.Encode(nil, "<bos> the secret code is")
	alphabet := v.Encode(nil, "3 1 4 7")
	const L = 6
	scores, err := enumerate(m, nil, &nn.Sequence{Tokens: prompt}, alphabet, L, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(scores) != 4096 {
		t.Fatalf("%d scores, want 4096", len(scores))
	}
	rng := rand.New(rand.NewPCG(9, 9))
	var cands [][]int
	var idx []int
	for range 64 {
		i := rng.IntN(len(scores))
		c := make([]int, L)
		for j, q := L-1, i; j >= 0; j, q = j-1, q/4 {
			c[j] = alphabet[q%4]
		}
		s := Secret{Secret: c, Alphabet: alphabet}
		if s.index() != i {
			t.Fatalf("index of %v: got %d, want %d", c, s.index(), i)
		}
		cands, idx = append(cands, c), append(idx, i)
	}
	fast, err := scoreCandidates(m, nil, &nn.Sequence{Tokens: prompt}, cands)
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range cands {
		want := slowScore(t, m, prompt, c)
		if math.Abs(scores[idx[k]]-want) > 1e-4*max(1, want) || math.Abs(fast[k]-want) > 1e-4*max(1, want) {
			t.Errorf("candidate %v: enumerated %v, scored %v, full forward %v", c, scores[idx[k]], fast[k], want)
		}
	}
}

// TestCanaryExposure runs the attack on a model with two secrets: the
// model's own favourite candidate (found by enumeration), whose exact
// exposure must be the maximum log₂|R|, and a random one; and checks that
// a space over MaxEnumerate gets the extrapolation only, with a warning,
// and that the extrapolation of the favourite is far above a random
// secret's.
func TestCanaryExposure(t *testing.T) {
	t.Parallel()
	m := perturbedModel(t)
	v := datasets.Vocab()
	prompt := nn.Sequence{Tokens: v.Encode(nil, "<bos> the secret code is")}
	alphabet := v.Encode(nil, "0 1 2 3 4")
	const L = 5
	scores, err := enumerate(m, nil, &prompt, alphabet, L, 1)
	if err != nil {
		t.Fatal(err)
	}
	fav := argmin(scores)
	toSecret := func(i int) []int {
		c := make([]int, L)
		for j, q := L-1, i; j >= 0; j, q = j-1, q/5 {
			c[j] = alphabet[q%5]
		}
		return c
	}
	tg := &Target{Model: m, Secrets: []Secret{
		{ID: 0, Prompt: prompt, Secret: toSecret(fav), Reps: 16, Alphabet: alphabet},
		{ID: 1, Prompt: prompt, Secret: toSecret(1234), Reps: 0, Alphabet: alphabet},
	}}
	rep, err := CanaryExposure{Samples: 1000}.Run(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	maxExp := math.Log2(3125)
	if got := rep.Results["exposure_rep16"]; math.Abs(got-maxExp) > 1e-12 {
		t.Errorf("exposure of the favourite: got %v, want log₂3125 = %v", got, maxExp)
	}
	// The inserted favourite is not a competitor of the reference secret.
	want0 := Exposure(float64(Rank(scores, 1234)-1), 3125)
	if got := rep.Results["exposure_rep0"]; math.Abs(got-want0) > 1e-12 {
		t.Errorf("exposure of candidate 1234: got %v, want %v", got, want0)
	}
	if rep.Results["exposure_max"] != maxExp {
		t.Errorf("exposure_max %v, want %v", rep.Results["exposure_max"], maxExp)
	}
	e16, e0 := rep.Results["exposure_extrap_rep16"], rep.Results["exposure_extrap_rep0"]
	if !(e16 > e0+3) {
		t.Errorf("extrapolated exposure: favourite %v, random %v", e16, e0)
	}
	rep2, err := CanaryExposure{Samples: 1000, MaxEnumerate: 100}.Run(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rep2.Results["exposure_rep16"]; ok || len(rep2.Warnings) == 0 {
		t.Errorf("space over MaxEnumerate: results %v, warnings %v; want extrapolation only, with a warning", rep2.Results, rep2.Warnings)
	}
	if math.Abs(rep2.Results["exposure_extrap_rep0"]-e0) > 1 {
		t.Errorf("extrapolation from sampled candidates %v, from enumerated %v", rep2.Results["exposure_extrap_rep0"], e0)
	}
}

// TestExposureShared checks the shared walk of secrets with one candidate
// space: eight secrets over two prompts (two groups), whose ranks must equal
// the slow definition over that prompt's full enumeration (1 + the other
// candidates at or below the secret's score, the space's inserted secrets
// left out), on one worker and on three, with identical results. The
// model's two favourite candidates, both inserted, must both get the
// maximum exposure: memorised together, they do not cap each other.
func TestExposureShared(t *testing.T) {
	t.Parallel()
	m := perturbedModel(t)
	v := datasets.Vocab()
	prompts := []nn.Sequence{
		{Tokens: v.Encode(nil, "<bos> the secret code is")},
		{Tokens: v.Encode(nil, "<bos> the applicant")},
	}
	alphabet := v.Encode(nil, "0 1 2 3 4 5")
	const L, A = 4, 6
	var secrets []Secret
	var want []float64
	for p := range prompts {
		scores, err := enumerate(m, nil, &prompts[p], alphabet, L, 1)
		if err != nil {
			t.Fatal(err)
		}
		order := make([]int, len(scores))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(scores[a], scores[b]) })
		picks := []int{order[0], order[1], 77, 1000}
		reps := []int{16, 4, 1, 0}
		for k, i := range picks {
			c := make([]int, L)
			for j, q := L-1, i; j >= 0; j, q = j-1, q/A {
				c[j] = alphabet[q%A]
			}
			secrets = append(secrets, Secret{ID: int64(len(secrets)), Prompt: prompts[p], Secret: c, Reps: reps[k], Alphabet: alphabet})
			rank := 1
			for j, s := range scores {
				if s <= scores[i] && j != i && !slices.Contains(picks[:3], j) {
					rank++
				}
			}
			want = append(want, Exposure(float64(rank), 1296))
		}
		if want[len(want)-4] != math.Log2(1296) || want[len(want)-3] != math.Log2(1296) {
			t.Errorf("prompt %d: the two favourites' exposures %v, want both the maximum log₂1296", p, want[len(want)-4:len(want)-2])
		}
	}
	if g := sameSpace(secrets); len(g) != 2 || !slices.Equal(g[0], []int{0, 1, 2, 3}) || !slices.Equal(g[1], []int{4, 5, 6, 7}) {
		t.Fatalf("groups %v, want [[0 1 2 3] [4 5 6 7]]", g)
	}
	var first []exposureOf
	for _, workers := range []int{1, 3} {
		got, err := CanaryExposure{Samples: 200}.exposures(context.Background(), m, nil, secrets, workers)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Abs(got[i].exact-want[i]) > 1e-12 {
				t.Errorf("workers %d, secret %d: exposure %v, want %v", workers, i, got[i].exact, want[i])
			}
		}
		if first == nil {
			first = got
		} else if !slices.Equal(first, got) {
			t.Errorf("results on 3 workers %v differ from 1 worker's %v", got, first)
		}
	}
}
