// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// This file is a slow, independent reference implementation of the models'
// forward passes in float64, written from their definitions (the
// doc comments of TinyMLLM, ViT, Block, Linear and Adapter) without the tape
// or the backend. Gradient checks only test that a backward pass matches its
// own forward pass; these tests pin the forward pass itself: where [CLS]
// sits, which block's attention the visual transform sees, the order in
// which images replace their placeholders, position embeddings, the LoRA
// scale, the adapter's nonlinearity, the causal mask, the tied head and the
// loss normalisation (mean over the answer tokens, each predicted from the
// position before it).

// mat is a dense float64 matrix, row-major.
type mat struct {
	r, c int
	d    []float64
}

func newMat(r, c int) mat { return mat{r, c, make([]float64, r*c)} }

func (m mat) at(i, j int) float64 { return m.d[i*m.c+j] }

func paramMat(p *Param) mat {
	m := newMat(p.Shape[0], len(p.Data)/p.Shape[0])
	for i, v := range p.Data {
		m.d[i] = float64(v)
	}
	return m
}

// refLinear is y = x·Wᵀ + b + (α/r)·(x·Aᵀ)·Bᵀ.
func refLinear(x mat, l *Linear) mat {
	w := paramMat(l.W)
	y := newMat(x.r, w.r)
	for i := 0; i < x.r; i++ {
		for o := 0; o < w.r; o++ {
			var s float64
			for k := 0; k < x.c; k++ {
				s += x.at(i, k) * w.at(o, k)
			}
			if l.B != nil {
				s += float64(l.B.Data[o])
			}
			y.d[i*y.c+o] = s
		}
	}
	if l.LoRAA != nil {
		a, b := paramMat(l.LoRAA), paramMat(l.LoRAB)
		scale := float64(l.LoRAScale)
		for i := 0; i < x.r; i++ {
			u := make([]float64, a.r)
			for j := range u {
				for k := 0; k < x.c; k++ {
					u[j] += x.at(i, k) * a.at(j, k)
				}
			}
			for o := 0; o < b.r; o++ {
				var s float64
				for j, uj := range u {
					s += uj * b.at(o, j)
				}
				y.d[i*y.c+o] += scale * s
			}
		}
	}
	return y
}

func refGELU(x mat) mat {
	y := newMat(x.r, x.c)
	for i, v := range x.d {
		y.d[i] = v * 0.5 * (1 + math.Erf(v/math.Sqrt2))
	}
	return y
}

func refAdd(a, b mat) mat {
	y := newMat(a.r, a.c)
	for i := range a.d {
		y.d[i] = a.d[i] + b.d[i]
	}
	return y
}

func refLayerNorm(x mat, n *LayerNorm) mat {
	y := newMat(x.r, x.c)
	for i := 0; i < x.r; i++ {
		var m, v float64
		for j := 0; j < x.c; j++ {
			m += x.at(i, j)
		}
		m /= float64(x.c)
		for j := 0; j < x.c; j++ {
			v += (x.at(i, j) - m) * (x.at(i, j) - m)
		}
		v /= float64(x.c)
		for j := 0; j < x.c; j++ {
			y.d[i*x.c+j] = (x.at(i, j)-m)/math.Sqrt(v+n.Eps)*float64(n.G.Data[j]) + float64(n.B.Data[j])
		}
	}
	return y
}

// refAttention returns softmax(Q_h K_hᵀ/√dh [+ causal mask])·V_h per head
// and the probabilities p[h][i][j].
func refAttention(q, k, v mat, heads int, causal bool) (mat, [][][]float64) {
	T, D := q.r, q.c
	dh := D / heads
	out := newMat(T, D)
	probs := make([][][]float64, heads)
	for h := 0; h < heads; h++ {
		probs[h] = make([][]float64, T)
		for i := 0; i < T; i++ {
			p := make([]float64, T)
			mx := math.Inf(-1)
			for j := 0; j < T; j++ {
				if causal && j > i {
					p[j] = math.Inf(-1)
					continue
				}
				var s float64
				for c := 0; c < dh; c++ {
					s += q.at(i, h*dh+c) * k.at(j, h*dh+c)
				}
				p[j] = s / math.Sqrt(float64(dh))
				mx = math.Max(mx, p[j])
			}
			var z float64
			for j := range p {
				p[j] = math.Exp(p[j] - mx)
				z += p[j]
			}
			for j := range p {
				p[j] /= z
				for c := 0; c < dh; c++ {
					out.d[i*D+h*dh+c] += p[j] * v.at(j, h*dh+c)
				}
			}
			probs[h][i] = p
		}
	}
	return out, probs
}

func refAdapter(x mat, a *Adapter) mat {
	if a == nil {
		return x
	}
	return refAdd(x, refLinear(refGELU(refLinear(x, a.Down)), a.Up))
}

// refRotary rotates, in every head of width dh and at every row p, the
// column pair (i, i+dh/2) by the angle p·10000^(−2i/dh) (RoFormer with
// LLaMA's half-split pairing).
func refRotary(x mat, heads int) mat {
	dh := x.c / heads
	y := newMat(x.r, x.c)
	for p := 0; p < x.r; p++ {
		for h := 0; h < heads; h++ {
			for i := 0; i < dh/2; i++ {
				ang := float64(p) / math.Pow(10000, float64(2*i)/float64(dh))
				a, b := x.at(p, h*dh+i), x.at(p, h*dh+i+dh/2)
				y.d[p*x.c+h*dh+i] = a*math.Cos(ang) - b*math.Sin(ang)
				y.d[p*x.c+h*dh+i+dh/2] = a*math.Sin(ang) + b*math.Cos(ang)
			}
		}
	}
	return y
}

// refSmear mixes, in every head h, row j of x with row j−1 (zero before
// the first) by σ(logit_h) and 1 − σ(logit_h) (Olsson et al. 2022's smeared
// keys).
func refSmear(x mat, logit *Param) mat {
	heads := len(logit.Data)
	dh := x.c / heads
	y := newMat(x.r, x.c)
	for j := 0; j < x.r; j++ {
		for c := 0; c < x.c; c++ {
			s := 1 / (1 + math.Exp(-float64(logit.Data[c/dh])))
			y.d[j*x.c+c] = s * x.at(j, c)
			if j > 0 {
				y.d[j*x.c+c] += (1 - s) * x.at(j-1, c)
			}
		}
	}
	return y
}

func refBlock(x mat, b *Block, causal bool) (mat, [][][]float64) {
	a := refLayerNorm(x, b.LN1)
	q, k := refLinear(a, b.Q), refLinear(a, b.K)
	if b.Rotary {
		q, k = refRotary(q, b.Heads), refRotary(k, b.Heads)
	}
	if b.Smear != nil {
		k = refSmear(k, b.Smear)
	}
	heads, probs := refAttention(q, k, refLinear(a, b.V), b.Heads, causal)
	x = refAdd(x, refAdapter(refLinear(heads, b.O), b.Adapter1))
	m := refLinear(refGELU(refLinear(refLayerNorm(x, b.LN2), b.MLP.FC1)), b.MLP.FC2)
	return refAdd(x, refAdapter(m, b.Adapter2)), probs
}

func refStack(x mat, s *Stack) (mat, [][][][]float64) {
	var all [][][][]float64
	for _, b := range s.Blocks {
		var p [][][]float64
		x, p = refBlock(x, b, s.Causal)
		all = append(all, p)
	}
	return refLayerNorm(x, s.LN), all
}

// refVision is the ViT: a Conv2d with kernel and stride p (weight [D, C, p,
// p]) gives one token per patch in row-major patch order; [CLS] comes
// first; then position embeddings and the blocks. It returns the tokens and
// every block's attention probabilities.
func refVision(img []float32, v *VisionEncoder) (mat, [][][][]float64) {
	p, S, C := v.Patch, v.ImageSize, v.Channels
	n := S / p
	w := v.PatchEmbed.W
	D := w.Shape[0]
	x := newMat(n*n+1, D)
	for d := 0; d < D; d++ {
		x.d[d] = float64(v.CLS.Data[d]) + float64(v.Pos.Data[d])
	}
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			row := 1 + a*n + b
			for d := 0; d < D; d++ {
				s := float64(v.PatchEmbed.B.Data[d])
				for c := 0; c < C; c++ {
					for i := 0; i < p; i++ {
						for j := 0; j < p; j++ {
							s += float64(w.Data[((d*C+c)*p+i)*p+j]) * float64(img[(c*S+a*p+i)*S+b*p+j])
						}
					}
				}
				x.d[row*D+d] = s + float64(v.Pos.Data[row*D+d])
			}
		}
	}
	return refStack(x, v.Stack)
}

// refAddRows returns the matrix whose row i is rows[i] + pos row i (the
// input embeddings plus their position embeddings).
func refAddRows(rows [][]float64, pos mat) mat {
	x := newMat(len(rows), pos.c)
	for i, r := range rows {
		for d := range pos.c {
			x.d[i*pos.c+d] = r[d] + pos.at(i, d)
		}
	}
	return x
}

// refTokenLosses returns the cross-entropy of every marked token of s
// (predicted from the hidden state of the position before it, logits
// h·Tokᵀ with the tied head) and the [CLS]→token attention of the
// configured vision block for each image. mix, when not nil, is applied to
// every image's encoder tokens.
func refTokenLosses(m *TinyMLLM, s *Sequence, mix *TokenMix) ([]float64, [][][]float64) {
	W := m.Config.Width
	tok := paramMat(m.Tok)
	pos := newMat(m.Config.MaxLen, W) // rotary: no absolute embedding
	if m.Config.Positions != "rope" {
		pos = paramMat(m.Pos)
	}
	var rows [][]float64
	var cls [][][]float64
	var posOf []int
	img := 0
	for _, id := range s.Tokens {
		posOf = append(posOf, len(rows))
		if id != TokenImage {
			rows = append(rows, append([]float64(nil), tok.d[id*W:(id+1)*W]...))
			continue
		}
		enc, probs := refVision(s.Images[img], m.Vision)
		img++
		layer := max(len(m.Vision.Stack.Blocks)-m.Config.CLSAttnLayer, 0)
		var c [][]float64
		for _, ph := range probs[layer] {
			c = append(c, ph[0])
		}
		cls = append(cls, c)
		if mix != nil {
			mixed := newMat(len(mix.Rows), enc.c)
			for j, r := range mix.Rows {
				for k, src := range r.Src {
					for d := 0; d < enc.c; d++ {
						mixed.d[j*enc.c+d] += float64(r.Weight[k]) * enc.at(src, d)
					}
				}
				for d, a := range r.Add {
					mixed.d[j*enc.c+d] += float64(a)
				}
			}
			enc = mixed
		}
		v := refLinear(refGELU(refLinear(enc, m.Proj1)), m.Proj2)
		for i := 0; i < v.r; i++ {
			j := i
			if m.Config.CLSLast {
				j = (i + 1) % v.r // the first row last
			}
			rows = append(rows, v.d[j*W:(j+1)*W])
		}
	}
	hid, _ := refStack(refAddRows(rows, pos), m.LM)
	var losses []float64
	for i, l := range s.Loss {
		if !l {
			continue
		}
		h := hid.d[(posOf[i]-1)*W : posOf[i]*W]
		z := make([]float64, m.Config.Vocab)
		mx := math.Inf(-1)
		for c := range z {
			for d := 0; d < W; d++ {
				z[c] += h[d] * tok.at(c, d)
			}
			mx = math.Max(mx, z[c])
		}
		var se float64
		for _, v := range z {
			se += math.Exp(v - mx)
		}
		losses = append(losses, mx+math.Log(se)-z[s.Tokens[i]])
	}
	return losses, cls
}

// perturbAll moves every tensor of m off its initial values, so LoRA B,
// adapters, biases and LayerNorm gains all take part in the forward pass.
func perturbAll(m Module, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, p := range m.Params() {
		for i := range p.Data {
			p.Data[i] += float32(0.1 * rng.NormFloat64())
		}
	}
}

func TestTinyMLLMMatchesReference(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		peft      PEFT
		positions string
		smear     bool
		clsLast   bool
	}{
		{PEFT{Method: "lora", Targets: []string{"q", "k", "v", "o", "fc1", "fc2"}, Alpha: 12, Parts: []string{"vision", "projector", "lm"}}, "", false, false},
		{PEFT{Method: "adapter", Parts: []string{"vision", "lm"}}, "learned", false, true},
		{PEFT{Method: "lora", Targets: []string{"q", "k", "v"}, Parts: []string{"lm"}}, "rope", false, false},
		{PEFT{Method: "full", Parts: []string{"lm"}}, "", true, true},
		{PEFT{Method: "lora", Targets: []string{"k"}, Parts: []string{"lm"}}, "rope", true, false},
	} {
		peft := tc.peft
		name := fmt.Sprintf("%s/%s/smear=%v/clslast=%v", peft.Method, tc.positions, tc.smear, tc.clsLast)
		c := smokeConfig(t)
		c.VisionLayers, c.Layers = 3, 2 // the [CLS] map comes from block 1 of 3
		c.PEFT, c.Positions, c.SmearKeys, c.CLSLast = peft, tc.positions, tc.smear, tc.clsLast
		m, err := NewTinyMLLM(c)
		if err != nil {
			t.Fatal(err)
		}
		perturbAll(m, 3)
		rng := rand.New(rand.NewPCG(60, 60))
		// Two images, so their order matters; the loss marks tokens right
		// after each image (predicted from its last visual token) and
		// later ones.
		s := Sequence{
			Tokens: []int{TokenBOS, TokenImage, 7, 8, TokenImage, 9, 10, 11, TokenEOS},
			Images: [][]float32{randImage(rng, c), randImage(rng, c)},
			Loss:   []bool{false, false, true, false, false, true, false, true, true},
		}
		// A transform that keeps [CLS], drops patch 1, and merges patches 2
		// and 3 with an added constant.
		mix := TokenMix{Rows: []MixRow{
			{Src: []int{0}, Weight: []float32{1}},
			{Src: []int{2, 3}, Weight: []float32{0.25, 0.75}, Add: make([]float32, c.VisionWidth)},
			{Src: []int{4}, Weight: []float32{1}},
		}}
		for d := range mix.Rows[1].Add {
			mix.Rows[1].Add[d] = float32(d) / 100
		}
		var gotCLS []Tensor
		vt := func(index int, tokens, cls Tensor) TokenMix {
			gotCLS = append(gotCLS, cls.Clone())
			return mix
		}
		for _, withMix := range []bool{false, true} {
			var mp *TokenMix
			var tf VisualTransform
			if withMix {
				mp, tf = &mix, vt
			}
			want, wantCLS := refTokenLosses(m, &s, mp)
			gotCLS = nil
			got, _, err := m.TokenLosses(&s, nil, tf)
			if err != nil {
				t.Fatal(err)
			}
			seen := gotCLS
			if len(got) != len(want) {
				t.Fatalf("%s: %d token losses, want %d", peft.Method, len(got), len(want))
			}
			var mean float64
			for i := range want {
				// float32 against float64 through 5 blocks: 1e-4 relative.
				if math.Abs(got[i]-want[i]) > 1e-4*math.Max(1, want[i]) {
					t.Errorf("%s, mix %v: token loss %d = %.7g, reference %.7g", name, withMix, i, got[i], want[i])
				}
				mean += want[i] / float64(len(want))
			}
			// The training loss is the mean over the marked tokens.
			loss, err := m.Loss(NewTape(nil, nil), &s, nil, tf)
			if err != nil {
				t.Fatal(err)
			}
			if l := float64(loss.Value.Data[0]); math.Abs(l-mean) > 1e-4*math.Max(1, mean) {
				t.Errorf("%s, mix %v: loss %.7g, reference mean over answer tokens %.7g", name, withMix, l, mean)
			}
			if !withMix {
				continue
			}
			if len(seen) != 2 {
				t.Fatalf("transform called %d times, want 2 (once per image)", len(seen))
			}
			for k, cl := range seen {
				for h, row := range wantCLS[k] {
					for j, w := range row {
						if g := float64(cl.Data[h*len(row)+j]); math.Abs(g-w) > 1e-5 {
							t.Fatalf("image %d: [CLS] attention [%d, %d] = %v, reference %v", k, h, j, g, w)
						}
					}
				}
			}
		}
	}
}

func TestViTMatchesReference(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.Classes = 4
	c.PEFT = PEFT{Method: "lora", Targets: []string{"q", "v", "fc2"}}
	m, err := NewViT(c)
	if err != nil {
		t.Fatal(err)
	}
	perturbAll(m, 4)
	img := randImage(rand.New(rand.NewPCG(61, 61)), c)
	enc, _ := refVision(img, m.Vision)
	cls := newMat(1, enc.c)
	copy(cls.d, enc.d[:enc.c])
	want := refLinear(cls, m.Head)
	_, p, err := m.Predict(img)
	if err != nil {
		t.Fatal(err)
	}
	mx := math.Inf(-1)
	for _, v := range want.d {
		mx = math.Max(mx, v)
	}
	var z float64
	for _, v := range want.d {
		z += math.Exp(v - mx)
	}
	for k, v := range want.d {
		if w := math.Exp(v-mx) / z; math.Abs(p[k]-w) > 1e-5 {
			t.Errorf("class %d: probability %v, reference %v", k, p[k], w)
		}
	}
}

// TestObservedValues checks what Hooks.Observe reports (Rap-FT reads layer
// inputs and pre-activations, DP-MTV per-head outputs): for every linear map
// of the model, "<name>.out" is the map applied to "<name>.in" (LoRA
// included) and "<name>.lora" is A·x; a block's "attn.heads" is the input of
// its out-projection; and "<block>.in" of block i+1 is the output of block
// i.
func TestObservedValues(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.VisionLayers, c.Layers = 2, 2
	c.PEFT = PEFT{Method: "lora", Targets: []string{"q", "v", "fc1"}, Parts: []string{"vision", "lm"}}
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	perturbAll(m, 5)
	rng := rand.New(rand.NewPCG(62, 62))
	s := vqa(rng, c, 3, 2)
	seen := map[string]Tensor{}
	h := &Hooks{Observe: func(site string, x Tensor) {
		if _, dup := seen[site]; dup {
			t.Errorf("site %s observed twice", site)
		}
		seen[site] = x.Clone()
	}}
	if _, _, err := m.Forward(NewTape(nil, nil), &s, nil, h, nil); err != nil {
		t.Fatal(err)
	}
	toMat := func(x Tensor) mat {
		r := newMat(x.Rows(), x.Cols())
		for i, v := range x.Data {
			r.d[i] = float64(v)
		}
		return r
	}
	near := func(site string, got Tensor, want mat) {
		t.Helper()
		if len(got.Data) != len(want.d) {
			t.Errorf("%s: %d values, want %d", site, len(got.Data), len(want.d))
			return
		}
		for i, v := range got.Data {
			if math.Abs(float64(v)-want.d[i]) > 1e-5*(1+math.Abs(want.d[i])) {
				t.Errorf("%s[%d] = %v, want %v", site, i, v, want.d[i])
				return
			}
		}
	}
	linears := []*Linear{m.Vision.PatchEmbed, m.Proj1, m.Proj2}
	for _, st := range []*Stack{m.Vision.Stack, m.LM} {
		for bi, b := range st.Blocks {
			linears = append(linears, b.Q, b.K, b.V, b.O, b.MLP.FC1, b.MLP.FC2)
			near(b.Name+".attn.o.in", seen[b.Name+".attn.heads"], toMat(seen[b.Name+".attn.o.in"]))
			if bi > 0 {
				prev := st.Blocks[bi-1]
				// x' = h + MLP(LN2 h), h = x + O(heads): rebuilt from the
				// observed pieces.
				hmid := refAdd(toMat(seen[prev.Name+".in"]), toMat(seen[prev.Name+".attn.o.out"]))
				near(b.Name+".in", seen[b.Name+".in"], refAdd(hmid, toMat(seen[prev.Name+".mlp.fc2.out"])))
			}
		}
	}
	for _, l := range linears {
		in, ok := seen[l.Name+".in"]
		if !ok {
			t.Errorf("%s.in not observed", l.Name)
			continue
		}
		near(l.Name+".out", seen[l.Name+".out"], refLinear(toMat(in), l))
		if l.LoRAA != nil {
			u := refLinear(toMat(in), &Linear{W: l.LoRAA})
			near(l.Name+".lora", seen[l.Name+".lora"], u)
		} else if _, ok := seen[l.Name+".lora"]; ok {
			t.Errorf("%s.lora observed without LoRA", l.Name)
		}
	}
}

// refFusion is the Fusion classifier from its definition: per convolution
// a 3×3 convolution with zero padding 1, ReLU and 2×2 max pooling; the
// feature map flattened channel-major into the image projection; token and
// position embeddings (early fusion: the image feature is the first token,
// at position 0); the text blocks and final LayerNorm; the mean over
// positions; late fusion: the head sees [image feature, text feature].
func refFusion(m *Fusion, img []float32, tokens []int) []float64 {
	C, S := m.Config.Channels, m.Config.ImageSize
	x := make([]float64, len(img))
	for i, v := range img {
		x[i] = float64(v)
	}
	for _, cv := range m.Convs {
		F := cv.W.Shape[0]
		y := make([]float64, F*S*S)
		for f := 0; f < F; f++ {
			for i := 0; i < S; i++ {
				for j := 0; j < S; j++ {
					s := float64(cv.B.Data[f])
					for c := 0; c < C; c++ {
						for a := -1; a <= 1; a++ {
							for b := -1; b <= 1; b++ {
								if i+a < 0 || i+a >= S || j+b < 0 || j+b >= S {
									continue
								}
								s += float64(cv.W.Data[((f*C+c)*3+a+1)*3+b+1]) * x[(c*S+i+a)*S+j+b]
							}
						}
					}
					y[(f*S+i)*S+j] = math.Max(s, 0)
				}
			}
		}
		h := S / 2
		p := make([]float64, F*h*h)
		for f := 0; f < F; f++ {
			for i := 0; i < h; i++ {
				for j := 0; j < h; j++ {
					p[(f*h+i)*h+j] = math.Max(math.Max(y[(f*S+2*i)*S+2*j], y[(f*S+2*i)*S+2*j+1]),
						math.Max(y[(f*S+2*i+1)*S+2*j], y[(f*S+2*i+1)*S+2*j+1]))
				}
			}
		}
		x, C, S = p, F, h
	}
	if m.ImgFC != nil { // the "mlp" encoder: Linear, ReLU
		x = refLinear(mat{1, len(x), x}, m.ImgFC).d
		for i, v := range x {
			x[i] = math.Max(v, 0)
		}
	}
	feat := refLinear(mat{1, len(x), x}, m.ImgProj)
	W := m.Config.Width
	tok, pos := paramMat(m.Tok), paramMat(m.Pos) // learned, whatever Positions
	var rows [][]float64
	if m.Config.FusionMode == "early" {
		rows = append(rows, feat.d)
	}
	for _, id := range tokens {
		rows = append(rows, tok.d[id*W:(id+1)*W])
	}
	enc, _ := refStack(refAddRows(rows, pos), m.Text)
	pooled := make([]float64, W)
	for i := 0; i < enc.r; i++ {
		for d := 0; d < W; d++ {
			pooled[d] += enc.at(i, d) / float64(enc.r)
		}
	}
	if m.Config.FusionMode == "late" {
		pooled = append(append([]float64(nil), feat.d...), pooled...)
	}
	return refLinear(mat{1, len(pooled), pooled}, m.Head).d
}

func TestFusionMatchesReference(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.Classes, c.Layers = 3, 2
	// Positions "rope" is for TinyMLLM's language model only: Fusion keeps
	// its learned position embedding (Config.Positions).
	for _, tc := range []struct{ mode, positions, enc string }{{"late", "", ""}, {"early", "", ""}, {"late", "rope", ""}, {"late", "", "mlp"}, {"early", "", "mlp"}} {
		mode := tc.mode
		c.FusionMode, c.Positions, c.ImageEncoder = mode, tc.positions, tc.enc
		c.PEFT = PEFT{Method: "adapter"}
		m, err := NewFusion(c)
		if err != nil {
			t.Fatal(err)
		}
		perturbAll(m, 6)
		img := randImage(rand.New(rand.NewPCG(63, 63)), c)
		toks := []int{2, 9, 5, 11, 3}
		want := refFusion(m, img, toks)
		z, _, err := m.Logits(NewTape(nil, nil), img, toks, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, w := range want {
			if g := float64(z.Value.Data[k]); math.Abs(g-w) > 1e-4*(1+math.Abs(w)) {
				t.Errorf("%s/%s: logit %d = %v, reference %v", mode, tc.positions, k, g, w)
			}
		}
	}
}
