// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"bytes"
	"flag"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/pretrain"
)

var (
	tableOut      = flag.String("gia.out", "", "write the gia table (gia.md) and its grids (PNG) to `dir`")
	tableEps      = flag.String("gia.eps", "1,8,inf", "the private defences' ε values of the gia table (TestTable), comma-separated")
	tableTrials   = flag.Int("gia.trials", 3, "batches per cell of the gia table (TestTable)")
	tablePretrain = flag.String("gia.pretrain", "results/pretrain", "cache `dir` of the pretrained bases the gia table attacks (relative to the package directory)")
)

// TestTableControls runs a reduced gia table (batch 1, one trial, ε ∈
// {1, ∞}, a short fusion attack) and checks the rows the controls
// name: undefended ViT PSNR ≥ 25 dB and fusion TRR ≥ 0.9; at ε = 1 the ViT
// PSNR within 3 dB of the mean-image baseline and TRR ≤ 0.5.
func TestTableControls(t *testing.T) {
	t.Parallel()
	defs, err := Defences([]float64{1, math.Inf(1)}, 0.8, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Table(smokeData(t), defs, &TableOptions{Batches: []int{1}, Trials: 1, Invert: &InvertOptions{Iterations: 3, Restarts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2*len(defs) {
		t.Fatalf("got %d rows, want %d", len(rows), 2*len(defs))
	}
	for _, r := range rows {
		private := !math.IsInf(r.Defence.Epsilon, 1)
		switch {
		case r.Model == "vit" && r.Defence.Method == "nonprivate" && r.PSNRMean < 25:
			t.Errorf("undefended ViT: PSNR %.2f dB, want ≥ 25", r.PSNRMean)
		case r.Model == "fusion" && r.Defence.Method == "nonprivate" && r.TRR < 0.9:
			t.Errorf("undefended fusion: TRR %.2f, want ≥ 0.9", r.TRR)
		case r.Model == "vit" && private && r.PSNRMean > r.BaselinePSNR+3:
			t.Errorf("ViT %s ε=%v: PSNR %.2f dB, want ≤ baseline %.2f + 3", r.Defence.Method, r.Defence.Epsilon, r.PSNRMean, r.BaselinePSNR)
		case r.Model == "fusion" && private && r.TRR > 0.5:
			t.Errorf("fusion %s ε=%v: TRR %.2f, want ≤ 0.5", r.Defence.Method, r.Defence.Epsilon, r.TRR)
		}
	}
}

// TestTable writes the gia table of the ViT and the fusion classifier at
// smoke scale when -gia.out is set, attacking the pretrained smoke bases
// (ViT with a new 10-class head, the fusion classifier), with the
// pretrained ViT encoder as the feature distance's; the rows of the
// methods' own TinyMLLM updates are `repro run gia`:
//
//	go test ./attacks/gia -run TestTable$ -gia.out $PWD/results/gia -gia.pretrain $PWD/results/pretrain -timeout 60m
func TestTable(t *testing.T) {
	if *tableOut == "" {
		t.Skip("set -gia.out to write the gia table")
	}
	var eps []float64
	for _, f := range strings.Split(*tableEps, ",") {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatalf("-gia.eps: %v", err)
		}
		eps = append(eps, v)
	}
	defs, err := Defences(eps, 0.8, 1)
	if err != nil {
		t.Fatal(err)
	}
	d := smokeData(t)
	vb, err := pretrain.Base(t.Context(), pretrain.Options{Scale: string(d.Scale), Arch: "vit", Dir: *tablePretrain})
	if err != nil {
		t.Fatal(err)
	}
	fb, err := pretrain.Base(t.Context(), pretrain.Options{Scale: string(d.Scale), Arch: "fusion", Dir: *tablePretrain})
	if err != nil {
		t.Fatal(err)
	}
	vit, err := pretrain.ViTFor(vb.Model.(*nn.ViT), len(d.Classes), 1)
	if err != nil {
		t.Fatal(err)
	}
	enc := vb.Model.(*nn.ViT).Vision
	opt := &TableOptions{Batches: []int{1, 8}, Trials: *tableTrials, ViT: vit, Fusion: fb.Model.(*nn.Fusion), Encoder: enc,
		Invert: &InvertOptions{Iterations: 1000, Restarts: 2, LR: 0.05, TV: 0.05, Gray: true}}
	rows, err := Table(d, defs, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(*tableOut, 0o755); err != nil {
		t.Fatal(err)
	}
	md := Markdown(rows)
	t.Log("\n" + md)
	if err := os.WriteFile(filepath.Join(*tableOut, "gia.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		var buf bytes.Buffer
		c := 3
		if err := WriteGrid(&buf, r.Grid[:], c, 28, 28, 2); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("grid-%s-%s-eps%v-b%d.png", r.Model, r.Defence.Method, r.Defence.Epsilon, r.Batch)
		if err := os.WriteFile(filepath.Join(*tableOut, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWriteGrid decodes a written grid and checks its size and two
// pixels: a white original and a black reconstruction.
func TestWriteGrid(t *testing.T) {
	t.Parallel()
	white, black := make([]float32, 3*4*5), make([]float32, 3*4*5)
	for i := range white {
		white[i] = 1
	}
	var buf bytes.Buffer
	if err := WriteGrid(&buf, [][][]float32{{white, white}, {black, black}}, 3, 4, 5, 2); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// 2 columns of 5·2 + 2 gap, plus the leading gap; 2 rows of 4·2 + 2.
	if b := img.Bounds(); b.Dx() != 2*12+2 || b.Dy() != 2*10+2 {
		t.Errorf("grid is %v, want 26×22", b)
	}
	if r, _, _, _ := img.At(3, 3).RGBA(); r != 0xffff {
		t.Errorf("original pixel red %x, want white", r)
	}
	if r, _, _, _ := img.At(3, 2+10+3).RGBA(); r != 0 {
		t.Errorf("reconstruction pixel red %x, want black", r)
	}
}

// TestEncodePNG decodes an encoded image and checks every pixel against
// round(255·v) of its value clamped to [0, 1] (computed here, not by
// byte8), for three channels and for one repeated over red, green and
// blue, and that a wrongly sized image is an error.
func TestEncodePNG(t *testing.T) {
	t.Parallel()
	const h, w = 2, 3
	x := []float32{-0.5, 0, 1, 1.5}
	for len(x) < 3*h*w { // levels a fifth of a step off the rounding midpoints
		x = append(x, (float32(len(x)*37%256)+0.2)/255, (float32(len(x)*53%256)+0.8)/255)
	}
	want8 := func(v float32) uint32 {
		return uint32(math.Round(255 * math.Min(1, math.Max(0, float64(v)))))
	}
	for _, c := range []int{3, 1} {
		p, err := EncodePNG(x[:c*h*w], c, h, w)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(p))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
			t.Fatalf("c %d: image is %v, want %d×%d", c, b, w, h)
		}
		for i := range h {
			for j := range w {
				r, g, bl, a := img.At(j, i).RGBA()
				got := [4]uint32{r >> 8, g >> 8, bl >> 8, a >> 8}
				var want [4]uint32
				for q := range 3 {
					want[q] = want8(x[min(q, c-1)*h*w+i*w+j])
				}
				want[3] = 255
				if got != want {
					t.Errorf("c %d, pixel (%d, %d): RGBA %v, want %v", c, i, j, got, want)
				}
			}
		}
	}
	if _, err := EncodePNG(x[:5], 1, h, w); err == nil {
		t.Error("an image of 5 values for 1×2×3 encoded without error")
	}
}
