// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

// TestFitSoftmax checks the probe's regression on data whose answer is
// known: three well-separated Gaussian clusters in 5 dimensions (centres 4
// apart along three axes, sd 0.5, so the Bayes error is below 10⁻⁸) are
// classified perfectly, and labels drawn independently of the features
// are predicted at about chance on fresh data (3 classes, 3,000 held-out
// points: the accuracy's sd is 0.0086, the test allows 6 sd).
func TestFitSoftmax(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	draw := func(n int, random bool) ([][]float64, []int) {
		x, y := make([][]float64, n), make([]int, n)
		for i := range x {
			y[i] = rng.IntN(3)
			x[i] = make([]float64, 5)
			for j := range x[i] {
				x[i][j] = 0.5 * rng.NormFloat64()
			}
			if !random {
				x[i][y[i]] += 4
			}
		}
		return x, y
	}
	x, y := draw(600, false)
	p := fitSoftmax(x, y, 3)
	hx, hy := draw(3000, false)
	if got := p.accuracy(hx, hy); got != 1 {
		t.Errorf("separable clusters: held-out accuracy %v, want 1", got)
	}
	x, y = draw(600, true)
	p = fitSoftmax(x, y, 3)
	hx, hy = draw(3000, true)
	if got := p.accuracy(hx, hy); got < 1.0/3-6*0.0086 || got > 1.0/3+6*0.0086 {
		t.Errorf("labels independent of the features: held-out accuracy %v, want 1/3 ± 0.052", got)
	}
}

// TestPatchCells checks the patches of each scene cell, worked out by
// hand: with 7-pixel patches (small) the 4×4 grid gives each 14×14 cell a
// 2×2 block of patches (rows 1-based after [CLS]); with 14-pixel patches
// (smoke) one patch a cell; 4-pixel patches (7×7) do not divide the cells
// evenly.
func TestPatchCells(t *testing.T) {
	for _, tc := range []struct {
		patch int
		want  [4][]int
	}{
		{7, [4][]int{{1, 2, 5, 6}, {3, 4, 7, 8}, {9, 10, 13, 14}, {11, 12, 15, 16}}},
		{14, [4][]int{{1}, {2}, {3}, {4}}},
	} {
		got, err := patchCells(nn.Config{ImageSize: 28, Patch: tc.patch})
		if err != nil {
			t.Fatalf("patch %d: %v", tc.patch, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("patch %d (-want +got):\n%s", tc.patch, diff)
		}
	}
	if _, err := patchCells(nn.Config{ImageSize: 28, Patch: 4}); err == nil {
		t.Error("patch 4: no error, want one (cells of 3 and 4 patch columns)")
	}
}

// TestProbeScenes runs the probes on an untrained smoke model: the pixel
// probe reads each cell's colour and shape from the rendering, which is a
// fixed RGB colour on black (it must be near perfect), and every probe
// reports its features' sizes.
func TestProbeScenes(t *testing.T) {
	if testing.Short() {
		t.Skip("fits eight probes (about 10 s on a quiet core)")
	}
	d, err := datasets.Build("shapes-vqa"+datasets.TuneSuffix, &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("smoke", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	probes, err := ProbeScenes(m, d.Private, d.Test)
	if err != nil {
		t.Fatal(err)
	}
	dims := map[string]int{"pixels": 3 * 14 * 14, "encoder": cfg.VisionWidth, "tokens": cfg.Width, "init-encoder": cfg.VisionWidth, "cls": 4 * cfg.VisionWidth}
	if len(probes) != 2*len(dims) {
		t.Fatalf("got %d probes, want %d", len(probes), 2*len(dims))
	}
	for _, p := range probes {
		if p.Dims != dims[p.Features] {
			t.Errorf("%s %s: %d features, want %d", p.Features, p.Target, p.Dims, dims[p.Features])
		}
		if p.Features == "pixels" && p.Held < 0.95 {
			t.Errorf("pixels %s: held-out accuracy %v, want ≥ 0.95", p.Target, p.Held)
		}
		if p.Chance <= 0 || p.Chance >= 1 {
			t.Errorf("%s %s: chance %v, want in (0, 1)", p.Features, p.Target, p.Chance)
		}
		if p.VarShare < 0 || p.VarShare > 1 {
			t.Errorf("%s %s: variance share %v, want in [0, 1]", p.Features, p.Target, p.VarShare)
		}
	}
	cs, err := Captions(m, d.Public)
	if err != nil {
		t.Fatal(err)
	}
	if cs.Captions == 0 || cs.Objects < cs.Captions {
		t.Errorf("Captions: %d captions, %d objects; want some, at least one object each", cs.Captions, cs.Objects)
	}
	for _, v := range []float64{cs.Count, cs.Position, cs.Colour, cs.Shape} {
		if v < 0 || v > 1 {
			t.Errorf("Captions = %+v: a share out of [0, 1]", cs)
		}
	}
}

// TestVarShare checks the between-class share of variance against values
// worked by hand: features equal to the class's one-hot code are all
// between-class variance (1); a feature constant across classes with
// within-class spread ±1 around class means ±1 has between-class variance
// 1 and total 2 (½); features that do not vary give 0.
func TestVarShare(t *testing.T) {
	for _, tc := range []struct {
		desc string
		x    [][]float64
		y    []int
		want float64
	}{
		{"one-hot", [][]float64{{1, 0}, {0, 1}, {1, 0}, {0, 1}}, []int{0, 1, 0, 1}, 1},
		{"half", [][]float64{{0}, {-2}, {2}, {0}}, []int{0, 0, 1, 1}, 0.5},
		{"constant", [][]float64{{3}, {3}, {3}}, []int{0, 1, 2}, 0},
	} {
		if got := varShare(tc.x, tc.y, 3); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: varShare = %v, want %v", tc.desc, got, tc.want)
		}
	}
}

// TestCaptionObjects checks the parse of scene captions against captions
// worked by hand, with an unfinished object at the end skipped.
func TestCaptionObjects(t *testing.T) {
	got := captionObjects("a red circle at the top left and a blue square at the bottom right and a green <eos>")
	want := map[string][2]string{"top left": {"red", "circle"}, "bottom right": {"blue", "square"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("captionObjects (-want +got):\n%s", diff)
	}
	var s datasets.Scene
	s.Objects = []datasets.Object{{Colour: 2, Kind: 1, Cell: 1}, {Colour: 0, Kind: 2, Cell: 2}}
	got = captionObjects(s.Caption())
	want = map[string][2]string{"top right": {"blue", "square"}, "bottom left": {"red", "triangle"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("captionObjects(%q) (-want +got):\n%s", s.Caption(), diff)
	}
}

// TestCaptionAttention checks the attention shares against closed forms:
// with every query map of the language model zeroed, each attention row
// is uniform over the positions up to its own, so the position r that
// predicts a colour word gives each earlier token 1/(r+1). In
// "<bos> <image> describe the scene . CAPTION" the image's n patches and
// [CLS] fill positions 1 to n+1, and token i ≥ 2 sits at position i+n; the
// reference counts the patches of the named cell (n/4), the other patches
// and [CLS] over r+1, word by word. With the initial query and key maps
// scaled up (attention far from uniform), the own-cell share is checked
// against the attention rows read here through nn.Hooks, with the cells taken from the scene keys (the
// k-th object of a caption is the k-th non-empty cell) and the patches of
// a cell from the 4×4 grid's geometry.
func TestCaptionAttention(t *testing.T) {
	d, err := datasets.Build("shapes-vqa", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := nn.Preset("small", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	zeroed := 0
	for _, p := range m.Params() {
		if strings.HasPrefix(p.Name, "lm.") && strings.Contains(p.Name, ".attn.q.") {
			clear(p.Data)
			zeroed++
		}
	}
	if zeroed != 2*cfg.Layers {
		t.Fatalf("zeroed %d query tensors, want %d", zeroed, 2*cfg.Layers)
	}
	shares, area, err := CaptionAttention(m, d.Public)
	if err != nil {
		t.Fatal(err)
	}
	n := cfg.Patches()
	var want [4]float64
	words := 0
	v := datasets.Vocab()
	for _, ex := range d.Public {
		if ex.Kind != "caption" || !datasets.PretrainHeldOut(ex.Items) {
			continue
		}
		ws := strings.Fields(v.Decode(ex.Answer))
		for j := 0; j+6 < len(ws); j += 8 { // "a C S at the P1 P2 and"
			row := len(ex.Prompt) + j + 1 + n - 1
			all := float64(row + 1)
			want[0] += float64(n/4) / all
			want[1] += float64(n-n/4) / all
			want[2] += 1 / all
			want[3] += (all - float64(n) - 1) / all
			words++
		}
	}
	if words == 0 || len(shares) != cfg.Layers || area != 0.25 {
		t.Fatalf("%d colour words, %d blocks, area %v; want some, %d, 0.25", words, len(shares), area, cfg.Layers)
	}
	for i, s := range shares {
		got := [4]float64{s.Own, s.Other, s.CLS, s.Text}
		for k := range got {
			if w := want[k] / float64(words); s.Block != i || math.Abs(got[k]-w) > 1e-5 {
				t.Errorf("block %d (%d): share %d = %.6f, want %.6f", i, s.Block, k, got[k], w)
			}
		}
	}

	// The cell of each colour word, against attention that is not uniform
	// (the initial query and key maps scaled up 20 times).
	m, err = nn.NewTinyMLLM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params() {
		if strings.HasPrefix(p.Name, "lm.") && (strings.Contains(p.Name, ".attn.q.") || strings.Contains(p.Name, ".attn.k.")) {
			for i := range p.Data {
				p.Data[i] *= 20
			}
		}
	}
	shares, _, err = CaptionAttention(m, d.Public)
	if err != nil {
		t.Fatal(err)
	}
	own := make([]float64, cfg.Layers)
	words = 0
	for _, ex := range d.Public {
		if ex.Kind != "caption" || !datasets.PretrainHeldOut(ex.Items) {
			continue
		}
		var rows [][]float32 // per block: the attention rows, heads × T × T
		h := &nn.Hooks{Observe: func(site string, x nn.Tensor) {
			if strings.HasPrefix(site, "lm.") && strings.HasSuffix(site, ".attn.probs") {
				rows = append(rows, slices.Clone(x.Data))
			}
		}}
		s := nn.Sequence{Tokens: append(slices.Clone(ex.Prompt), ex.Answer...), Images: ex.Images}
		if _, _, err := m.Forward(nn.NewTape(nil, nil), &s, nil, h, nil); err != nil {
			t.Fatal(err)
		}
		T := len(s.Tokens) + n
		var objCells []int
		for c, part := range strings.Split(strings.TrimPrefix(ex.Items[0], "shapes:"), ",") {
			if part != "-" {
				objCells = append(objCells, c)
			}
		}
		for k, cell := range objCells {
			row := len(ex.Prompt) + 8*k + 1 + n - 1
			words++
			for b := range rows {
				for hh := range cfg.Heads {
					for a := range 4 { // patch (a, c) of the 4×4 grid at position 1 + 4a + c
						for c := range 4 {
							if 2*(a/2)+c/2 == cell {
								own[b] += float64(rows[b][hh*T*T+row*T+1+4*a+c]) / float64(cfg.Heads)
							}
						}
					}
				}
			}
		}
	}
	for b, s := range shares {
		if w := own[b] / float64(words); math.Abs(s.Own-w) > 1e-9 || math.Abs(s.Own-0.25*(s.Own+s.Other)) < 1e-3 {
			t.Errorf("block %d, sharpened: own-cell share %.6f, want %.6f (and not exactly a quarter of the patches' %.6f)", b, s.Own, w, s.Own+s.Other)
		}
	}
}

// TestCellCaptions checks CellCaptions against a slow reference: for every
// scored word, the model run again on the tokens before it alone (causal
// attention: the last row of the prefix is the row that predicts it), the
// argmax taken among the candidate words by hand, and the attention of
// that row split by the cell's patches computed here from the 4×4 grid
// (small: 7-pixel patches, [CLS] after them). The query and key maps are
// scaled up so that the predictions and the attention depend on the
// context.
func TestCellCaptions(t *testing.T) {
	d, exs, cfg, m := sharpenedCaptionModel(t, 12)
	got, err := CellCaptions(m, append(slices.Clone(exs), d.Public[0]))
	if err != nil {
		t.Fatal(err)
	}
	v := datasets.Vocab()
	id := vocabID(t, v)
	colours := []string{"red", "green", "blue", "yellow", "purple", "cyan"}
	shapes := []string{"circle", "square", "triangle"}
	n := cfg.Patches() // 16: patch k (1-based) at LM position k, [CLS] at n+1
	own := [4][]int{{1, 2, 5, 6}, {3, 4, 7, 8}, {9, 10, 13, 14}, {11, 12, 15, 16}}
	var occ, col, shp, objects int
	att := make([][4]float64, cfg.Layers)
	for _, ex := range exs {
		text, _ := datasets.SceneCellCaption(ex.Items[0])
		toks := v.Encode(nil, datasets.SceneCellPrompt+" "+text+" <eos>")
		ws := strings.Fields(datasets.SceneCellPrompt + " " + text + " <eos>")
		if len(ws) != len(toks) {
			t.Fatalf("%d words, %d tokens", len(ws), len(toks))
		}
		// predict runs the prefix before word k and returns its last row's
		// logits and, per block, the attention on the cell's patches, the
		// other patches, [CLS] and the text.
		predict := func(k, cell int) ([]float32, [][4]float64) {
			T := k + n // the <image> token becomes n+1 rows
			lg, probs := prefixForward(t, m, toks[:k], ex.Images)
			var a [][4]float64
			for b := range cfg.Layers {
				p := probs[b]
				heads := p.Shape[0]
				var sh [4]float64
				for hh := range heads {
					r := p.Data[hh*T*T+(T-1)*T : hh*T*T+T*T]
					for k := 1; k <= n; k++ {
						if slices.Contains(own[cell], k) {
							sh[0] += float64(r[k]) / float64(heads)
						} else {
							sh[1] += float64(r[k]) / float64(heads)
						}
					}
					sh[2] += float64(r[n+1]) / float64(heads)
					sh[3] += float64(r[0]) / float64(heads)
					for k := n + 2; k < T; k++ {
						sh[3] += float64(r[k]) / float64(heads)
					}
				}
				a = append(a, sh)
			}
			return lg, a
		}
		best := func(l []float32, words []string) string {
			b := words[0]
			for _, w := range words {
				if l[id(w)] > l[id(b)] {
					b = w
				}
			}
			return b
		}
		cell := -1
		for k := len(strings.Fields(datasets.SceneCellPrompt)); k < len(ws); k++ {
			if ws[k] != "a" && ws[k] != "nothing" || ws[k-3] != "the" {
				continue
			}
			cell++
			l, _ := predict(k, cell)
			if best(l, []string{"a", "nothing"}) == ws[k] {
				occ++
			}
			if ws[k] == "nothing" {
				continue
			}
			objects++
			l, a := predict(k+1, cell)
			if best(l, colours) == ws[k+1] {
				col++
			}
			for b := range a {
				for i := range 4 {
					att[b][i] += a[b][i]
				}
			}
			if l, _ := predict(k+2, cell); best(l, shapes) == ws[k+2] {
				shp++
			}
		}
		if cell != 3 {
			t.Fatalf("%q: %d cells, want 4", text, cell+1)
		}
	}
	want := CellScore{Scenes: len(exs), Objects: objects, Occupied: float64(occ) / float64(4*len(exs)),
		Colour: float64(col) / float64(objects), Shape: float64(shp) / float64(objects), Area: 0.25}
	if got.Scenes != want.Scenes || got.Objects != want.Objects || got.Occupied != want.Occupied ||
		got.Colour != want.Colour || got.Shape != want.Shape || got.Area != want.Area {
		t.Errorf("CellCaptions = %+v, want %+v", got, want)
	}
	if len(got.Attention) != cfg.Layers {
		t.Fatalf("%d blocks of attention, want %d", len(got.Attention), cfg.Layers)
	}
	for b, s := range got.Attention {
		g := [4]float64{s.Own, s.Other, s.CLS, s.Text}
		for i := range g {
			if w := att[b][i] / float64(objects); math.Abs(g[i]-w) > 1e-5 {
				t.Errorf("block %d share %d = %.6f, want %.6f", b, i, g[i], w)
			}
		}
	}
	t.Logf("%+v", got)
}

// sharpenedCaptionModel returns smoke shapes-vqa, its first n held-out
// public scene captions, and an untrained small TinyMLLM whose language
// model's query and key maps are scaled up 20 times, so that its
// predictions and attention depend on the context.
func sharpenedCaptionModel(t *testing.T, n int) (*datasets.Dataset, []datasets.Example, nn.Config, *nn.TinyMLLM) {
	t.Helper()
	d, err := datasets.Build("shapes-vqa", &datasets.Options{Scale: datasets.Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var exs []datasets.Example
	for _, ex := range d.Public {
		if ex.Kind == "caption" && datasets.PretrainHeldOut(ex.Items) && len(exs) < n {
			exs = append(exs, ex)
		}
	}
	cfg, err := nn.Preset("small", datasets.Vocab().Len())
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.NewTinyMLLM(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params() {
		if strings.HasPrefix(p.Name, "lm.") && (strings.Contains(p.Name, ".attn.q.") || strings.Contains(p.Name, ".attn.k.")) {
			for i := range p.Data {
				p.Data[i] *= 20
			}
		}
	}
	return d, exs, cfg, m
}

// vocabID returns the id of a word of v, failing the test for a word v
// does not hold.
func vocabID(t *testing.T, v *datasets.Vocabulary) func(string) int {
	return func(w string) int {
		i, ok := v.ID(w)
		if !ok {
			t.Fatalf("%q not in the vocabulary", w)
		}
		return i
	}
}

// prefixForward runs m on the tokens toks with the images and returns the
// logits of its last row, the row that predicts the next word under causal
// attention, and each block's attention probabilities by block index.
func prefixForward(t *testing.T, m *nn.TinyMLLM, toks []int, images [][]float32) ([]float32, map[int]nn.Tensor) {
	t.Helper()
	s := nn.Sequence{Tokens: slices.Clone(toks), Images: images}
	probs := map[int]nn.Tensor{}
	h := &nn.Hooks{Observe: func(site string, x nn.Tensor) {
		var b int
		if _, err := fmt.Sscanf(site, "lm.blocks.%d.attn.probs", &b); err == nil {
			probs[b] = nn.Tensor{Shape: slices.Clone(x.Shape), Data: slices.Clone(x.Data)}
		}
	}}
	tp := nn.NewTape(nil, nil)
	hid, _, err := m.Forward(tp, &s, nil, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m.Logits(tp, hid, []int{len(toks) + m.Config.Patches() - 1}).Value.Data, probs
}
