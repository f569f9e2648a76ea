// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/pretrain"
)

var (
	loraIters = flag.Int("gia.lora-iters", 0, "iterations of the LoRA probe (TestMLLMLoRAProbe); 0 skips it")
	loraTV    = flag.Float64("gia.lora-tv", 0.05, "total-variation weight of the LoRA probe")
	loraLR    = flag.Float64("gia.lora-lr", 0.05, "Adam step of the LoRA probe")
	loraN     = flag.Int("gia.lora-n", 1, "images of the LoRA probe")
	loraFirst = flag.Int("gia.lora-first", 0, "first public example of the LoRA probe")
	loraRest  = flag.Int("gia.lora-restarts", 1, "restarts of the LoRA probe")
	loraPrior = flag.Bool("gia.lora-prior", false, "search the LoRA probe's image over the EmbeddingPrior")
	loraDecay = flag.Bool("gia.lora-decay", false, "divide the LoRA probe's Adam step by 10 at 3/8, 5/8 and 7/8 of the iterations")
	loraL2    = flag.Bool("gia.lora-l2", false, "match the LoRA probe's update by the ℓ₂ distance instead of the cosine")
	loraSpan  = flag.Bool("gia.lora-span", false, "attack the LoRA probe's update by the span objective (AttackMLLMSpan) instead of gradient matching")
	loraBInit = flag.Float64("gia.lora-binit", 0, "standard deviation of the LoRA probe's B factors (0: B = 0, the first step's update)")
	giaScale  = flag.String("gia.scale", "smoke", "scale of the LoRA probe's base model and data (smoke or small)")
	loraFD    = flag.Bool("gia.lora-fd", false, "check the LoRA probe's objective gradient (cosine and ℓ₂) at the public mean image against central differences (checkObjectiveFD) first")
	loraSweep = flag.String("gia.lora-sweep", "", "settings of the LoRA probe, one per `list` entry separated by ';', each a comma-separated list of key=value (lr, tv, iters, restarts, decay, l2, prior, gauss, scout; unset keys take the flags' values)")
)

// loraRank is the methods' default LoRA rank per scale (methods.Hyper's
// lora_rank).
var loraRank = map[datasets.Scale]int{datasets.Smoke: 4, datasets.Small: 8}

// mllmLoRABase returns the pretrained TinyMLLM of scale sc (cache
// -gia.pretrain when set, else built in a temporary directory) with LoRA on
// its language model as the methods add it at that scale (rank 4 at smoke,
// 8 at small, α twice the rank, q, k, v, o, fc1, fc2, B drawn with
// standard deviation bInit: 0 is the methods' B = 0), its layout, and
// fashion-vqa at sc. Without -gia.pretrain the cache is one temporary
// directory for the package's tests (sharedPretrainDir).
func mllmLoRABase(t testing.TB, sc datasets.Scale, bInit float64) (*nn.TinyMLLM, *nn.Layout, *datasets.Dataset) {
	t.Helper()
	rank, ok := loraRank[sc]
	if !ok {
		t.Fatalf("no LoRA rank for scale %q", sc)
	}
	d, err := datasets.Build("fashion-vqa", &datasets.Options{Scale: sc, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := sharedPretrainDir(t)
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "gia.pretrain" {
			dir = *tablePretrain
		}
	})
	b, err := pretrain.Base(t.Context(), pretrain.Options{Scale: string(sc), Arch: "tinymllm", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	m := b.Model.(*nn.TinyMLLM)
	l, err := m.SetPEFT(nn.PEFT{Method: "lora", Rank: rank, Alpha: 2 * float64(rank), Targets: []string{"q", "k", "v", "o", "fc1", "fc2"}, BInitStd: bInit, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	return m, l, d
}

var (
	pretrainOnce sync.Once
	pretrainDir  string
	pretrainErr  error
)

// sharedPretrainDir returns the temporary cache directory of the bases the
// tests pretrain when -gia.pretrain is not set, one for the whole package
// run (pretrain.Base builds each base once even when tests ask at the same
// time), removed by TestMain.
func sharedPretrainDir(t testing.TB) string {
	t.Helper()
	pretrainOnce.Do(func() { pretrainDir, pretrainErr = os.MkdirTemp("", "gia-pretrain-") })
	if pretrainErr != nil {
		t.Fatal(pretrainErr)
	}
	return pretrainDir
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if pretrainDir != "" {
		os.RemoveAll(pretrainDir)
	}
	os.Exit(code)
}

// mllmBatch returns example k of split as a Batch of one sequence.
func mllmBatch(split []datasets.Example, k int) Batch {
	ex := &split[k]
	seq, mask := ex.Sequence()
	return Batch{Images: [][]float32{ex.Images[0]}, Tokens: [][]int{seq}, Loss: [][]bool{mask}, Labels: []int{ex.Label}}
}

// TestMLLMLoRAProbe runs the LoRA attack on the raw update of the
// -gia.lora-n PUBLIC examples from -gia.lora-first (the attacker's own
// data: its settings are chosen here, never on the private examples the
// table scores) of fashion-vqa at -gia.scale, on the pretrained base of
// that scale with LoRA as the methods add it (B drawn with -gia.lora-binit),
// with the flags' settings, and logs per image PSNR, SSIM, the mean-image
// baseline, the embedding ceilings (embeddingCeiling, the Gaussian prior's
// conditional mean) and the time, then the means over the images. It
// fails when a reconstruction leaves [0, 1] or is not finite, when the
// PSNR it reports is not the reconstruction's against the original, or
// when the final objective is not finite and non-negative.
func TestMLLMLoRAProbe(t *testing.T) {
	if *loraIters == 0 {
		t.Skip("set -gia.lora-iters")
	}
	m, l, d := mllmLoRABase(t, datasets.Scale(*giaScale), *loraBInit)
	// The attacker's public pool (prior, mean image, scouted starts)
	// leaves out the probed images, as the private images it attacks in
	// a run are out of its public data.
	all := publicImages(d)
	pub := append(slices.Clone(all[:*loraFirst]), all[*loraFirst+*loraN:]...)
	mean := MeanImage(pub)
	t.Logf("%d public images in the attacker's pool", len(pub))
	opt := InvertOptions{Iterations: *loraIters, Restarts: *loraRest, LR: *loraLR, TV: *loraTV, Gray: true, Init: mean, Decay: *loraDecay, L2: *loraL2}
	opts, priors := []InvertOptions{opt}, []bool{*loraPrior}
	if *loraSweep != "" {
		opts, priors = nil, nil
		for _, set := range strings.Split(*loraSweep, ";") {
			o, p, err := parseSetting(opt, *loraPrior, set)
			if err != nil {
				t.Fatal(err)
			}
			opts, priors = append(opts, o), append(priors, p)
		}
	}
	var updates [][]float32
	for k := *loraFirst; k < *loraFirst+*loraN; k++ {
		updates = append(updates, mllmUpdate(t, m, l, mllmBatch(d.Public, k), Mechanism{}))
	}
	if *loraFD {
		b := mllmBatch(d.Public, *loraFirst)
		s := nn.Sequence{Tokens: b.Tokens[0], Images: b.Images, Loss: b.Loss[0]}
		gm, err := NewGradientMatch(l, MLLMGrad(m, l, s, nil), updates[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range []struct {
			name string
			x    []float32
		}{{"mean", mean}, {"truth", b.Images[0]}} {
			gx, gt := make([]float32, len(mean)), make([]float32, len(mean))
			v, err := gm.Objective(at.x, gx)
			if err != nil {
				t.Fatal(err)
			}
			tv := totalVariation(at.x, m.Config.Channels, m.Config.ImageSize, m.Config.ImageSize, 1, gt)
			t.Logf("at the %s image: distance %.4g, ‖∇_x distance‖ %.3g, TV %.4g, ‖∇_x TV‖ %.3g", at.name, v, norm(gx), tv, norm(gt))
		}
		rng := rand.New(rand.NewPCG(9, 9))
		for _, l2 := range []bool{false, true} {
			gm.L2 = l2
			checkObjectiveFD(t, gm, mean, rng, fmt.Sprint("pretrained, l2 ", l2))
		}
	}
	prior, err := NewEmbeddingPrior(m.Vision, pub)
	if err != nil {
		t.Fatal(err)
	}
	for q, opt := range opts {
		pr := prior
		if !priors[q] {
			pr = nil
		}
		var sum struct{ psnr, ssim, base, match float64 }
		for k := *loraFirst; k < *loraFirst+*loraN; k++ {
			b := mllmBatch(d.Public, k)
			attack := func() (*Outcome, error) { return AttackMLLMLoRA(m, l, updates[k-*loraFirst], b, pr, nil, &opt) }
			if *loraSpan {
				attack = func() (*Outcome, error) {
					return AttackMLLMSpan(m, l, updates[k-*loraFirst], b, pr, nil, nn.ClipRule{}, &opt)
				}
			}
			o, err := attack()
			if err != nil {
				t.Fatal(err)
			}
			checkProbeOutcome(t, k, o, b)
			base := PSNR(mean, b.Images[0], 1)
			t.Logf("image %d (%s): objective %.3g, PSNR %.2f dB, SSIM %.3f, baseline %.2f dB, ceilings %.2f dB (mean prior) %.2f dB (Gaussian prior), %v", k, d.Public[k].Kind, o.Match, o.MeanPSNR(), o.MeanSSIM(),
				base, PSNR(embeddingCeiling(m.Vision, b.Images[0], mean), b.Images[0], 1),
				PSNR(clamp01(prior.Image(make([]float32, len(mean)), prior.Coords(b.Images[0]))), b.Images[0], 1), o.Elapsed)
			sum.psnr += o.MeanPSNR()
			sum.ssim += o.MeanSSIM()
			sum.base += base
			sum.match += o.Match
		}
		n := float64(*loraN)
		t.Logf("prior %v, scout %d, lr %g, TV %g, gauss %g, %d iterations, %d restarts, decay %v, l2 %v: mean over %d images: PSNR %.2f dB, SSIM %.3f, objective %.4f, baseline %.2f dB",
			priors[q], opt.Scout, opt.LR, opt.TV, opt.Gauss, opt.Iterations, opt.Restarts, opt.Decay, opt.L2, *loraN, sum.psnr/n, sum.ssim/n, sum.match/n, sum.base/n)
	}
}

// checkProbeOutcome fails t when outcome o of the LoRA probe on batch b
// (one image) is not what its numbers say: a reconstruction outside
// [0, 1] or not finite, a PSNR that is not the reconstruction's against
// b's image (PSNR recomputed), or an objective that is negative or not
// finite.
func checkProbeOutcome(t *testing.T, k int, o *Outcome, b Batch) {
	t.Helper()
	if len(o.Images) != 1 || len(o.PSNR) != 1 {
		t.Fatalf("image %d: %d reconstructions and %d PSNRs, want 1", k, len(o.Images), len(o.PSNR))
	}
	for i, v := range o.Images[0] {
		if !(v >= 0 && v <= 1) {
			t.Fatalf("image %d: pixel %d is %v, want in [0, 1]", k, i, v)
		}
	}
	if want := PSNR(o.Images[0], b.Images[0], 1); math.Abs(o.PSNR[0]-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("image %d: reported PSNR %v, the reconstruction's %v", k, o.PSNR[0], want)
	}
	if !(o.Match >= 0) || math.IsInf(o.Match, 0) {
		t.Errorf("image %d: objective %v, want finite and non-negative", k, o.Match)
	}
}

// parseSetting returns o and prior with the keys of set (comma-separated
// key=value: lr, tv, iters, restarts, decay, l2, prior, gauss, scout) applied.
func parseSetting(o InvertOptions, prior bool, set string) (InvertOptions, bool, error) {
	for _, kv := range strings.Split(set, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return o, prior, fmt.Errorf("setting %q: %q is not key=value", set, kv)
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return o, prior, fmt.Errorf("setting %q: %w", set, err)
		}
		switch k {
		case "lr":
			o.LR = x
		case "tv":
			o.TV = x
		case "iters":
			o.Iterations = int(x)
		case "restarts":
			o.Restarts = int(x)
		case "decay":
			o.Decay = x != 0
		case "l2":
			o.L2 = x != 0
		case "prior":
			prior = x != 0
		case "gauss":
			o.Gauss = x
		case "scout":
			o.Scout = int(x)
		default:
			return o, prior, fmt.Errorf("setting %q: no key %q", set, k)
		}
	}
	return o, prior, nil
}

func publicImages(d *datasets.Dataset) [][]float32 {
	var pub [][]float32
	for _, ex := range d.Public {
		pub = append(pub, ex.Images[0])
	}
	return pub
}

// mllmUpdate returns the update mech releases for batch b on m.
func mllmUpdate(t testing.TB, m *nn.TinyMLLM, l *nn.Layout, b Batch, mech Mechanism) []float32 {
	t.Helper()
	var grads [][]float32
	for i := range b.Images {
		s := nn.Sequence{Tokens: b.Tokens[i], Images: b.Images[i : i+1], Loss: b.Loss[i]}
		g := make([]float32, l.Size)
		if _, err := MLLMGrad(m, l, s, nil)(b.Images[i], g, nil); err != nil {
			t.Fatal(err)
		}
		grads = append(grads, g)
	}
	g, err := Release(l, grads, mech)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// embeddingCeiling returns mean + P(x − mean), where P projects (channels
// tied) onto the row space of the linear map x ↦ patch embeddings of v
// (Patchify and the patch embedding's weight, no bias): every image x′
// with x′ − x in that map's null space has the same visual tokens, hence
// the same released update of any tensor behind the vision encoder, so a
// gradient-matching attack cannot tell them apart; this is the point of
// that set nearest to the mean image, the reconstruction of an attacker
// who recovers the embeddings exactly and knows nothing more.
func embeddingCeiling(v *nn.VisionEncoder, x, mean []float32) []float32 {
	hw := v.ImageSize * v.ImageSize
	cols := embeddingMatrix(v) // Aᵀ: cols[j] is A's column of pixel j
	r := len(cols[0])
	aat := make([][]float64, r)
	for i := range r {
		aat[i] = make([]float64, r)
		for k := range r {
			for j := range hw {
				aat[i][k] += cols[j][i] * cols[j][k]
			}
		}
	}
	dx := make([]float64, hw)
	for i := range hw {
		dx[i] = float64(x[i]) - float64(mean[i])
	}
	y := make([]float64, r) // A(x − mean)
	for j := range hw {
		for i := range r {
			y[i] += cols[j][i] * dx[j]
		}
	}
	z := solveSPD(aat, y)
	p := make([]float64, hw) // Aᵀz
	for j := range hw {
		for i := range r {
			p[j] += cols[j][i] * z[i]
		}
	}
	return addTied(mean, p, v.Channels)
}

// addTied returns mean + p (p one channel, repeated over c channels),
// clamped to [0, 1].
func addTied(mean []float32, p []float64, c int) []float32 {
	hw := len(p)
	out := make([]float32, len(mean))
	for ch := range c {
		for j := range hw {
			out[ch*hw+j] = float32(math.Min(1, math.Max(0, float64(mean[ch*hw+j])+p[j])))
		}
	}
	return out
}

// solveSPD solves a·z = y for a symmetric positive-definite a by Cholesky
// factorisation (a is overwritten).
func solveSPD(a [][]float64, y []float64) []float64 {
	n := len(a)
	for j := range n {
		for k := range j {
			a[j][j] -= a[j][k] * a[j][k]
		}
		a[j][j] = math.Sqrt(a[j][j])
		for i := j + 1; i < n; i++ {
			for k := range j {
				a[i][j] -= a[i][k] * a[j][k]
			}
			a[i][j] /= a[j][j]
		}
	}
	z := append([]float64(nil), y...)
	for i := range n {
		for k := range i {
			z[i] -= a[i][k] * z[k]
		}
		z[i] /= a[i][i]
	}
	for i := n - 1; i >= 0; i-- {
		for k := i + 1; k < n; k++ {
			z[i] -= a[k][i] * z[k]
		}
		z[i] /= a[i][i]
	}
	return z
}

// TestEmbeddingPrior checks the prior against its definitions on the smoke
// ViT encoder and the fl-mm public images: the conditional mean x̂ =
// x(Coords(x)) of a private image has the same patch embeddings as x
// (A·x̂ = A·x, to 10⁻³ relative: the ridge of 10⁻⁶ and float32 images;
// measured 2.4·10⁻⁴), and pullback is Bᵀ (⟨pullback(g), w⟩ =
// ⟨g, x(w) − μ⟩ for random g and w).
func TestEmbeddingPrior(t *testing.T) {
	t.Parallel()
	m, _ := smokeViT(t)
	_, p := smokePrior(t, m.Vision, 0)
	x := smokeData(t).Private[0].Images[0]
	xh := p.Image(make([]float32, len(x)), p.Coords(x))
	got, want := p.project(xh), p.project(x)
	var num, den float64
	for i := range want {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	if e := math.Sqrt(num / den); e > 1e-3 {
		t.Errorf("A·x̂ differs from A·x by %.3g relative, want ≤ 1e-3", e)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	w, g := make([]float64, p.Dim()), make([]float32, len(x))
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	for i := range g {
		g[i] = float32(rng.NormFloat64())
	}
	gw := make([]float64, p.Dim())
	p.pullback(gw, g)
	xw := p.Image(make([]float32, len(x)), w)
	var lhs, rhs float64
	for i := range w {
		lhs += gw[i] * w[i]
	}
	for i := range g {
		rhs += float64(g[i]) * (float64(xw[i]) - float64(p.mean[i]))
	}
	if math.Abs(lhs-rhs) > 1e-4*math.Abs(rhs) {
		t.Errorf("⟨pullback(g), w⟩ = %v, ⟨g, x(w) − μ⟩ = %v", lhs, rhs)
	}
}

// TestControlMLLMLoRA is the LoRA update's control, on the pretrained
// smoke TinyMLLM with LoRA on its language model as the methods add it
// (mllmLoRABase; B = 0, the first step's update) and the first private
// fashion-vqa sequence. The attack over the EmbeddingPrior (fitted to the
// public images; settings of the gia table, fewer iterations) must beat
// the public mean image by 2 dB on the raw update and stay within 3 dB of
// it at ε = 1 (clip 1 and one analytic-Gaussian release's noise). The
// issue's 25 dB bar cannot be met here: the update depends on the image
// only through its patch embeddings, and even their exact values give
// about 19–26 dB under the Gaussian prior (EmbeddingPrior;
// docs/gia.md). At the seeded initialisation the attack matches the update
// (cosine distance 0.0015) but not the image (below the baseline): the
// update of an untrained encoder barely depends on the image, so the
// control needs the pretrained base, which it builds in a temporary
// directory unless -gia.pretrain is set (minutes): skipped with -short.
func TestControlMLLMLoRA(t *testing.T) {
	if testing.Short() {
		t.Skip("pretrains the smoke TinyMLLM and runs two 300-iteration attacks")
	}
	t.Parallel()
	m, l, d := mllmLoRABase(t, datasets.Smoke, 0)
	pub := publicImages(d)
	prior, err := NewEmbeddingPrior(m.Vision, pub)
	if err != nil {
		t.Fatal(err)
	}
	b := mllmBatch(d.Private, 0)
	x := b.Images[0]
	base := PSNR(MeanImage(pub), x, 1)
	ceil := PSNR(clamp01(prior.Image(make([]float32, len(x)), prior.Coords(x))), x, 1)
	for _, tc := range []struct {
		desc     string
		mech     Mechanism
		min, max float64
	}{
		{"raw", Mechanism{}, base + 2, math.Inf(1)},
		{"eps=1", Mechanism{Rule: nn.Flat(1), Sigma: []float64{sigmaEps1(t)}, Seed: 3}, 0, base + 3},
	} {
		g := mllmUpdate(t, m, l, b, tc.mech)
		o, err := AttackMLLMLoRA(m, l, g, b, prior, nil, &InvertOptions{Iterations: 300, Restarts: 1, LR: 0.05, TV: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		if p := o.MeanPSNR(); p < tc.min || p > tc.max {
			t.Errorf("%s: PSNR %.2f dB, want in [%.2f, %.2f]", tc.desc, p, tc.min, tc.max)
		}
		t.Logf("%s: PSNR %.2f dB, SSIM %.3f, objective %.4f (baseline %.2f dB, Gaussian-prior ceiling %.2f dB), %v", tc.desc, o.MeanPSNR(), o.MeanSSIM(), o.Match, base, ceil, o.Elapsed)
	}
}
