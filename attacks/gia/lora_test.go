// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"flag"
	"math"
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
)

// mllmLoRABase returns the pretrained smoke TinyMLLM (cache -gia.pretrain)
// with LoRA on its language model as the methods add it at smoke (rank 4,
// α 8, q, k, v, o, fc1, fc2, B = 0), its layout, and fashion-vqa at smoke.
func mllmLoRABase(t testing.TB) (*nn.TinyMLLM, *nn.Layout, *datasets.Dataset) {
	t.Helper()
	d, err := datasets.Build("fashion-vqa", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := pretrain.Base(t.Context(), pretrain.Options{Scale: "smoke", Arch: "tinymllm", Dir: *tablePretrain})
	if err != nil {
		t.Fatal(err)
	}
	m := b.Model.(*nn.TinyMLLM)
	l, err := m.SetPEFT(nn.PEFT{Method: "lora", Rank: 4, Alpha: 8, Targets: []string{"q", "k", "v", "o", "fc1", "fc2"}, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	return m, l, d
}

// mllmBatch returns example k of split as a Batch of one sequence.
func mllmBatch(split []datasets.Example, k int) Batch {
	ex := &split[k]
	seq, mask := ex.Sequence()
	return Batch{Images: [][]float32{ex.Images[0]}, Tokens: [][]int{seq}, Loss: [][]bool{mask}, Labels: []int{ex.Label}}
}

// TestMLLMLoRAProbe runs the LoRA attack on the raw update of the first
// -gia.lora-n PUBLIC examples (the attacker's own data: its settings are
// chosen here, never on the private examples the table scores) with the
// flags' settings and logs PSNR, SSIM, the mean-image baseline, the
// embedding ceiling (embeddingCeiling) and the time.
func TestMLLMLoRAProbe(t *testing.T) {
	if *loraIters == 0 {
		t.Skip("set -gia.lora-iters")
	}
	m, l, d := mllmLoRABase(t)
	mean := publicMean(d)
	var pub [][]float32
	for _, ex := range d.Public {
		pub = append(pub, ex.Images[0])
	}
	t.Logf("%d public images", len(pub))
	for k := range *loraN {
		b := mllmBatch(d.Public, k)
		g := mllmUpdate(t, m, l, b, Mechanism{})
		o, err := AttackMLLMLoRA(m, l, g, b, &InvertOptions{Iterations: *loraIters, Restarts: 1, LR: *loraLR, TV: *loraTV, Gray: true, Init: mean})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("image %d: PSNR %.2f dB, SSIM %.3f, baseline %.2f dB, ceilings %.2f dB (mean prior) %.2f dB (Gaussian prior), %v", k, o.MeanPSNR(), o.MeanSSIM(),
			PSNR(mean, b.Images[0], 1), PSNR(embeddingCeiling(m.Vision, b.Images[0], mean), b.Images[0], 1),
			PSNR(gaussianCeiling(m.Vision, b.Images[0], mean, pub), b.Images[0], 1), o.Elapsed)
	}
}

func publicMean(d *datasets.Dataset) []float32 {
	var pub [][]float32
	for _, ex := range d.Public {
		pub = append(pub, ex.Images[0])
	}
	return MeanImage(pub)
}

// mllmUpdate returns the update mech releases for batch b on m.
func mllmUpdate(t testing.TB, m *nn.TinyMLLM, l *nn.Layout, b Batch, mech Mechanism) []float32 {
	t.Helper()
	var grads [][]float32
	for i := range b.Images {
		s := nn.Sequence{Tokens: b.Tokens[i], Images: b.Images[i : i+1], Loss: b.Loss[i]}
		g := make([]float32, l.Size)
		if _, err := MLLMGrad(m, l, s)(b.Images[i], g, nil); err != nil {
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
	cols := embeddingMatrix(v)
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

// gaussianCeiling returns E[x | Ax] under the Gaussian prior with the mean
// and covariance of the public images pub (channels tied, a ridge of
// 10⁻⁶ on AΣAᵀ), for A the patch-embedding map of embeddingCeiling: the
// reconstruction of an attacker who recovers the embeddings exactly and
// models the images as Gaussian with the public statistics, μ +
// ΣAᵀ(AΣAᵀ)⁻¹A(x − μ).
func gaussianCeiling(v *nn.VisionEncoder, x, mean []float32, pub [][]float32) []float32 {
	hw := v.ImageSize * v.ImageSize
	cols := embeddingMatrix(v)
	r := len(cols[0])
	n := len(pub)
	xa := make([][]float64, n) // (x_n − μ)ᵀAᵀ
	for k, img := range pub {
		xa[k] = make([]float64, r)
		for j := range hw {
			d := float64(img[j]) - float64(mean[j])
			for i := range r {
				xa[k][i] += d * cols[j][i]
			}
		}
	}
	m := make([][]float64, r) // AΣAᵀ
	for i := range r {
		m[i] = make([]float64, r)
		for k := range r {
			for q := range n {
				m[i][k] += xa[q][i] * xa[q][k] / float64(n)
			}
		}
		m[i][i] += 1e-6
	}
	y := make([]float64, r)
	for j := range hw {
		d := float64(x[j]) - float64(mean[j])
		for i := range r {
			y[i] += cols[j][i] * d
		}
	}
	z := solveSPD(m, y)
	p := make([]float64, hw) // ΣAᵀz = Σ_q (x_q − μ)((x_q − μ)ᵀAᵀz)/n
	for q, img := range pub {
		var w float64
		for i := range r {
			w += xa[q][i] * z[i]
		}
		for j := range hw {
			p[j] += (float64(img[j]) - float64(mean[j])) * w / float64(n)
		}
	}
	return addTied(mean, p, v.Channels)
}

// embeddingMatrix returns the columns of A, the linear map from a
// one-channel image (channels tied) to the patch embeddings of v without
// bias: cols[j] is A's column of pixel j.
func embeddingMatrix(v *nn.VisionEncoder) [][]float64 {
	hw := v.ImageSize * v.ImageSize
	embed := func(u []float64) []float64 {
		img := make([]float32, v.Channels*hw)
		for c := range v.Channels {
			for i := range hw {
				img[c*hw+i] = float32(u[i])
			}
		}
		t := nn.NewTape(nil, nil)
		in := t.Input(nn.Tensor{Shape: []int{v.Channels, v.ImageSize, v.ImageSize}, Data: img}, false)
		y := t.Affine(t.Patchify(in, v.Patch), t.Param(v.PatchEmbed.W), nil).Value.Data
		out := make([]float64, len(y))
		for i, f := range y {
			out[i] = float64(f)
		}
		return out
	}
	var cols [][]float64
	e := make([]float64, hw)
	for j := range hw {
		e[j] = 1
		cols = append(cols, embed(e))
		e[j] = 0
	}
	return cols
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
