// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

var (
	textIters = flag.Int("gia.text-iters", 0, "iterations of the text probe (TestTextProbe); 0 skips it")
	textN     = flag.Int("gia.text-n", 4, "public sequences of the text probe")
	textFirst = flag.Int("gia.text-first", 0, "first public sequence of the text probe")
	textSweep = flag.String("gia.text-sweep", "", "settings of the text probe, ';'-separated, each comma-separated key=value (lr, iters, restarts, noise, prior)")
)

// promptPositions returns the positions of s's prompt tokens that the
// text attack recovers: every position before the first loss target but
// the <image> placeholder.
func promptPositions(s nn.Sequence) []int {
	var at []int
	for i, id := range s.Tokens {
		if s.Loss[i] {
			break
		}
		if id != nn.TokenImage {
			at = append(at, i)
		}
	}
	return at
}

func words(ids []int) string {
	v := datasets.Vocab()
	var w []string
	for _, id := range ids {
		w = append(w, v.Word(id))
	}
	return strings.Join(w, " ")
}

func TestTextProbe(t *testing.T) {
	if *textIters == 0 {
		t.Skip("set -gia.text-iters")
	}
	m, l, d := mllmLoRABase(t, datasets.Smoke, *loraBInit)
	t.Logf("vocabulary %d tokens", m.Config.Vocab)
	sets := []string{""}
	if *textSweep != "" {
		sets = strings.Split(*textSweep, ";")
	}
	for _, set := range sets {
		opt := TextOptions{Iterations: *textIters}
		for _, kv := range strings.Split(set, ",") {
			if kv == "" {
				continue
			}
			k, v, _ := strings.Cut(kv, "=")
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			switch k {
			case "lr":
				opt.LR = x
			case "iters":
				opt.Iterations = int(x)
			case "restarts":
				opt.Restarts = int(x)
			case "noise":
				opt.Noise = x
			case "sweeps":
				opt.Sweeps = int(x)
			case "topk":
				opt.TopK = int(x)
			default:
				t.Fatalf("no key %q", k)
			}
		}
		var sum float64
		for k := *textFirst; k < *textFirst+*textN; k++ {
			b := mllmBatch(d.Public, k)
			s := nn.Sequence{Tokens: b.Tokens[0], Images: b.Images, Loss: b.Loss[0]}
			g := mllmUpdate(t, m, l, b, Mechanism{})
			at := promptPositions(s)
			want := make([]int, len(at))
			for i, p := range at {
				want[i] = s.Tokens[p]
			}
			o, err := RecoverText(m, l, g, s, at, nil, nil, &opt)
			if err != nil {
				t.Fatal(err)
			}
			sum += PositionTRR(o.Tokens, want)
			t.Logf("public %d: %q → %q, position TRR %.2f, match %.4f (relaxed %.4f), %v", k, words(want), words(o.Tokens), PositionTRR(o.Tokens, want), o.Match, o.Relaxed, o.Elapsed)
		}
		t.Logf("setting %q: mean position TRR %.3f", set, sum/float64(*textN))
	}
}

func TestTextSwapProbe(t *testing.T) {
	if *textIters == 0 {
		t.Skip("set -gia.text-iters")
	}
	m, l, d := mllmLoRABase(t, datasets.Smoke, *loraBInit)
	w := m.Config.Width
	for k := *textFirst; k < *textFirst+*textN; k++ {
		b := mllmBatch(d.Public, k)
		s := nn.Sequence{Tokens: b.Tokens[0], Images: b.Images, Loss: b.Loss[0]}
		g := mllmUpdate(t, m, l, b, Mechanism{})
		at := promptPositions(s)
		f, err := TextGrad(m, l, s, at, nil)
		if err != nil {
			t.Fatal(err)
		}
		gm, err := NewGradientMatch(l, f, g)
		if err != nil {
			t.Fatal(err)
		}
		emb := make([]float32, len(at)*w)
		for i, p := range at {
			id := s.Tokens[p]
			copy(emb[i*w:(i+1)*w], m.Tok.Data[id*w:(id+1)*w])
		}
		d0, _ := gm.Distance(emb)
		var line []string
		for i := range at {
			orig := slices.Clone(emb[i*w : (i+1)*w])
			type c struct {
				id int
				d  float64
			}
			var cs []c
			for id := range m.Config.Vocab {
				if id == nn.TokenImage || id == s.Tokens[at[i]] {
					continue
				}
				copy(emb[i*w:(i+1)*w], m.Tok.Data[id*w:(id+1)*w])
				dd, _ := gm.Distance(emb)
				cs = append(cs, c{id, dd})
			}
			copy(emb[i*w:(i+1)*w], orig)
			slices.SortFunc(cs, func(a, b c) int { return cmp.Compare(a.d, b.d) })
			line = append(line, fmt.Sprintf("%s: %s %.4f, %s %.4f, median %.4f", words([]int{s.Tokens[at[i]]}), words([]int{cs[0].id}), cs[0].d, words([]int{cs[1].id}), cs[1].d, cs[len(cs)/2].d))
		}
		t.Logf("public %d: truth %.2g\n%s", k, d0, strings.Join(line, "\n"))
	}
}

// TestTextGradFD checks the gradient of the text attack's objective on the
// LoRA update of a seeded smoke TinyMLLM (B drawn with σ 0.02, so that every
// LoRA tensor carries gradient) against brute-force central differences
// of the whole objective, nothing held fixed: in the relaxed embeddings
// (GradientMatch over TextGrad: the Hessian-vector product) and in the
// softmax logits (relaxedMix.objective: that product times the softmax's
// Jacobian), along three random directions each, for the cosine and the
// ℓ₂ distance, to 5% of the directional derivative. The update is that of
// the sequence itself; the relaxed point is its prompt's embeddings
// moved off the table.
func TestTextGradFD(t *testing.T) {
	t.Parallel()
	m, l, s := smokeMLLMLoRA(t, 0.02)
	at := promptPositions(s)
	f, err := TextGrad(m, l, s, at, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := m.Config.Width
	rng := rand.New(rand.NewPCG(4, 4))
	x := make([]float32, len(at)*w)
	for k, p := range at {
		id := s.Tokens[p]
		for c := range w {
			x[k*w+c] = m.Tok.Data[id*w+c] + float32(0.01*rng.NormFloat64())
		}
	}
	// The update of another prompt (the first prompt token moved to
	// another id), so the distance and its gradient are not zero.
	s2 := s
	s2.Tokens = slices.Clone(s.Tokens)
	s2.Tokens[at[len(at)-1]] = 7
	want := make([]float32, l.Size)
	if _, err := MLLMGrad(m, l, s2, nil)(s.Images[0], want, nil); err != nil {
		t.Fatal(err)
	}
	gm, err := NewGradientMatch(l, f, want)
	if err != nil {
		t.Fatal(err)
	}
	var vocab []int
	for id := range 40 {
		if id != nn.TokenImage {
			vocab = append(vocab, id)
		}
	}
	rm := &relaxedMix{tab: make([]float32, len(vocab)*w), w: w, nv: len(vocab), n: len(at), obj: gm.Objective}
	for j, id := range vocab {
		copy(rm.tab[j*w:(j+1)*w], m.Tok.Data[id*w:(id+1)*w])
	}
	z := make([]float64, len(at)*len(vocab))
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	for _, l2 := range []bool{false, true} {
		gm.L2 = l2
		gx := make([]float32, len(x))
		if _, err := gm.Objective(x, gx); err != nil {
			t.Fatal(err)
		}
		fdCheck(t, fmt.Sprint("embeddings, l2 ", l2), rng, len(x), 3e-4, func(i int) float64 { return float64(gx[i]) }, func(dir []float64, h float64) float64 {
			y := make([]float32, len(x))
			for i := range y {
				y[i] = float32(float64(x[i]) + h*dir[i])
			}
			v, err := gm.Distance(y)
			if err != nil {
				t.Fatal(err)
			}
			return v
		})
		gz := make([]float64, len(z))
		if _, err := rm.objective(z, gz); err != nil {
			t.Fatal(err)
		}
		fdCheck(t, fmt.Sprint("logits, l2 ", l2), rng, len(z), 1e-2, func(i int) float64 { return gz[i] }, func(dir []float64, h float64) float64 {
			y := make([]float64, len(z))
			for i := range y {
				y[i] = z[i] + h*dir[i]
			}
			rm.mix(y)
			v, err := gm.Distance(rm.e)
			if err != nil {
				t.Fatal(err)
			}
			return v
		})
	}
}

// fdCheck compares the directional derivative ⟨grad, d⟩ with the central
// difference (f(d, h) − f(d, −h))/(2h) along three random unit-variance
// directions d of n coordinates, to 5% (plus 1e-6).
func fdCheck(t *testing.T, label string, rng *rand.Rand, n int, h float64, grad func(i int) float64, f func(dir []float64, h float64) float64) {
	t.Helper()
	for trial := range 3 {
		dir := make([]float64, n)
		var an float64
		for i := range dir {
			dir[i] = rng.NormFloat64()
			an += dir[i] * grad(i)
		}
		fd := (f(dir, h) - f(dir, -h)) / (2 * h)
		t.Logf("%s, direction %d: finite difference %.6g, analytic %.6g", label, trial, fd, an)
		if math.Abs(fd-an) > 0.05*math.Abs(fd)+1e-6 {
			t.Errorf("%s, direction %d: finite difference %v, analytic %v", label, trial, fd, an)
		}
	}
}
