// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

// TestPrepareCellForm checks the cell forms of the cell-captions variant
// (Options.CellForm): each of CellForms gives a folder and a key of its
// own and the fixed order's plan with CaptionForm set, "" gives the fixed
// order's base itself, and forms out of CellFormParts' grammar or without
// the cell-captions variant are refused.
func TestPrepareCellForm(t *testing.T) {
	dir := t.TempDir()
	fixed, err := prepare(Options{Scale: "smoke", Dir: dir, CellCaptions: true, CaptionScale: 4, CaptionVision: true})
	if err != nil {
		t.Fatal(err)
	}
	if fixed.plan.CaptionForm != "" {
		t.Fatalf("the fixed order's plan has form %q", fixed.plan.CaptionForm)
	}
	keys := map[string]bool{fixed.k.key(): true}
	for _, form := range CellForms {
		g, err := prepare(Options{Scale: "smoke", Dir: dir, CellCaptions: true, CaptionScale: 4, CaptionVision: true, CellForm: form})
		if err != nil {
			t.Fatal(err)
		}
		if form == "" {
			if g.dir != fixed.dir || g.k.key() != fixed.k.key() {
				t.Errorf("form \"\": folder %s, want the fixed order's %s", g.dir, fixed.dir)
			}
			continue
		}
		want := fixed.plan
		want.CaptionForm = form
		prefix := "tinymllm-smoke-cellcapsx4v-" + strings.ReplaceAll(form, "+", "-") + "-"
		if !strings.HasPrefix(filepath.Base(g.dir), prefix) || keys[g.k.key()] {
			t.Errorf("form %s: folder %s key %.12s, want prefix %s and a new key", form, g.dir, g.k.key(), prefix)
		}
		keys[g.k.key()] = true
		if !reflect.DeepEqual(g.plan, want) {
			t.Errorf("form %s: plan %+v, want %+v", form, g.plan, want)
		}
	}
	for _, bad := range []string{"bogus", "questions+single", "single+single", "shuffled+", "+single", "fresh", "fresh+single"} {
		if _, err := CellFormParts(bad); err == nil {
			t.Errorf("CellFormParts(%q): no error", bad)
		}
		if _, err := prepare(Options{Scale: "smoke", Dir: dir, CellCaptions: true, CellForm: bad}); err == nil {
			t.Errorf("form %q: no error", bad)
		}
	}
	if _, err := prepare(Options{Scale: "smoke", Dir: dir, CellForm: "single"}); err == nil {
		t.Error("a cell form without the cell-captions variant: no error")
	}
}

// sceneParts returns, from a scene key alone, each cell's part of the
// cell-first description ("at the top left a red circle", "at the top
// right nothing"), each cell's class words (colour, shape; "" when
// empty) and the cells' names: the tests' reference.
func sceneParts(key string) (parts [4]string, objs [4][2]string, names [4]string) {
	names = [4]string{"top left", "top right", "bottom left", "bottom right"}
	for i, c := range strings.Split(strings.TrimPrefix(key, "shapes:"), ",") {
		if c == "-" {
			parts[i] = "at the " + names[i] + " nothing"
			continue
		}
		col, kin, _ := strings.Cut(c, ".")
		objs[i] = [2]string{col, kin}
		parts[i] = "at the " + names[i] + " a " + col + " " + kin
	}
	return parts, objs, names
}

// TestCellSequences checks the cell forms' sequences (cellSequences)
// against references built from each public training scene's key: the
// shuffled description holds the four cell parts of the scene in some
// order after datasets.SceneCellPrompt, orders vary across scenes and are
// drawn afresh by another call; the single form asks "what is at the
// CELL ?" about each cell and answers "a COLOUR SHAPE" or "nothing"; the
// questions form asks shapes-vqa's colour-at and shape-at questions about
// each cell and answers the colour, the shape or "nothing"; every
// sequence has the scene's image and the loss on the answer only.
func TestCellSequences(t *testing.T) {
	b, err := prepare(Options{Scale: "smoke", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.loadData(); err != nil {
		t.Fatal(err)
	}
	scenes := b.corpus.publicScenes()
	v := datasets.Vocab()
	split := func(s nn.Sequence) (prompt, answer string) {
		n := 0
		for n < len(s.Loss) && !s.Loss[n] {
			n++
		}
		if slices.Contains(s.Loss[n:], false) {
			t.Fatalf("%q: loss %v, want the answer's", v.Decode(s.Tokens), s.Loss)
		}
		return v.Decode(s.Tokens[:n]), strings.TrimSuffix(v.Decode(s.Tokens[n:]), " <eos>")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(form string) []nn.Sequence {
		seqs, err := b.corpus.cellSequences(form, rng)
		if err != nil {
			t.Fatal(err)
		}
		return seqs
	}
	first, second := draw("shuffled"), draw("shuffled")
	if len(first) != len(scenes) || len(second) != len(scenes) || len(scenes) < 100 {
		t.Fatalf("%d and %d shuffled descriptions of %d scenes", len(first), len(second), len(scenes))
	}
	var canonical, redrawn int
	for i, e := range scenes {
		parts, _, _ := sceneParts(e.Items[0])
		for _, s := range []nn.Sequence{first[i], second[i]} {
			p, a := split(s)
			got := strings.Split(a, " and ")
			if p != datasets.SceneCellPrompt || len(s.Images) != 1 || !slices.Equal(s.Images[0], e.Images[0]) ||
				!slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(parts[:]))) {
				t.Fatalf("scene %s: %q → %q, want the parts %q in some order", e.Items[0], p, a, parts)
			}
			if slices.Equal(got, parts[:]) {
				canonical++
			}
		}
		if !slices.Equal(first[i].Tokens, second[i].Tokens) {
			redrawn++
		}
	}
	// A random order is the fixed one 1 time in 24, and is drawn again
	// differently 23 times in 24.
	if n := 2 * len(scenes); canonical > n/8 || redrawn < len(scenes)*3/4 {
		t.Errorf("%d of %d descriptions in the fixed order, %d of %d drawn again differently", canonical, n, redrawn, len(scenes))
	}
	single, questions, both := draw("single"), draw("questions"), draw("single+questions")
	if len(single) != 4*len(scenes) || len(questions) != 8*len(scenes) || len(both) != 12*len(scenes) {
		t.Fatalf("%d single, %d questions, %d both of %d scenes", len(single), len(questions), len(both), len(scenes))
	}
	for i, e := range scenes {
		parts, objs, names := sceneParts(e.Items[0])
		var want [][2]string
		for c := range 4 {
			want = append(want, [2]string{"<bos> <image> what is at the " + names[c] + " ?", strings.TrimPrefix(parts[c], "at the "+names[c]+" ")})
		}
		var wantQ [][2]string
		for c := range 4 {
			col, kin := objs[c][0], objs[c][1]
			if col == "" {
				col, kin = "nothing", "nothing"
			}
			wantQ = append(wantQ, [2]string{"<bos> <image> what colour is the object at the " + names[c] + " ?", col},
				[2]string{"<bos> <image> what shape is the object at the " + names[c] + " ?", kin})
		}
		check := func(seqs []nn.Sequence, want [][2]string) {
			t.Helper()
			for j, w := range want {
				s := seqs[j]
				if p, a := split(s); p != w[0] || a != w[1] || len(s.Images) != 1 || !slices.Equal(s.Images[0], e.Images[0]) {
					t.Fatalf("scene %s sequence %d: %q → %q, want %q → %q with its image", e.Items[0], j, p, a, w[0], w[1])
				}
			}
		}
		check(single[4*i:4*i+4], want)
		check(questions[8*i:8*i+8], wantQ)
		check(both[12*i:12*i+12], append(slices.Clone(want), wantQ...))
	}
	// Fresh scenes: as many scenes, mostly not the public split's and
	// drawn again by another call; each one-cell answer is "nothing"
	// exactly where the image's cell is black.
	public := map[string]bool{}
	for _, e := range scenes {
		public[fmt.Sprint(e.Images[0])] = true
	}
	a, b2 := draw("single+fresh"), draw("single+fresh")
	if len(a) != 4*len(scenes) || len(b2) != len(a) {
		t.Fatalf("%d and %d fresh one-cell sequences of %d scenes", len(a), len(b2), len(scenes))
	}
	var old, same int
	for i := 0; i < len(a); i += 4 {
		if public[fmt.Sprint(a[i].Images[0])] {
			old++
		}
		if slices.Equal(a[i].Images[0], b2[i].Images[0]) {
			same++
		}
		for cell := range 4 {
			s := a[i+cell]
			p, ans := split(s)
			var sum float64
			for _, x := range datasets.CellImage(s.Images[0], cell) {
				sum += float64(x)
			}
			if !slices.Equal(s.Images[0], a[i].Images[0]) || p != datasets.SceneOneCellPrompt(cell) || (ans == "nothing") != (sum == 0) {
				t.Fatalf("fresh scene %d cell %d: %q → %q, cell pixels summing to %v", i/4, cell, p, ans, sum)
			}
		}
	}
	if old > len(scenes)/10 || same > len(scenes)/10 {
		t.Errorf("of %d fresh scenes, %d are public split images and %d drawn again alike", len(scenes), old, same)
	}
}

// TestPassPool checks passPool: every pass deals each sequence of the
// pool once, in the order rng.Perm draws (the stage's order without a
// redraw); with redraw, each pass after the first deals a pool drawn
// afresh, and a redrawn pool of another size is an error.
func TestPassPool(t *testing.T) {
	seq := func(i int) nn.Sequence { return nn.Sequence{Tokens: []int{i}} }
	pool := []nn.Sequence{seq(0), seq(1), seq(2)}
	draws := 0
	p := &passPool{seqs: pool, rng: rand.New(rand.NewPCG(1, 2)), redraw: func() ([]nn.Sequence, error) {
		draws++
		return []nn.Sequence{seq(10 * draws), seq(10*draws + 1), seq(10*draws + 2)}, nil
	}}
	ref := rand.New(rand.NewPCG(1, 2))
	for pass := range 4 {
		order := ref.Perm(3)
		for _, j := range order {
			s, err := p.next()
			if err != nil {
				t.Fatal(err)
			}
			if want := 10*pass + j; s.Tokens[0] != want {
				t.Fatalf("pass %d: got sequence %d, want %d", pass, s.Tokens[0], want)
			}
		}
	}
	if draws != 3 {
		t.Errorf("%d redraws in 4 passes, want 3", draws)
	}
	p = &passPool{seqs: pool, rng: rand.New(rand.NewPCG(1, 2)), redraw: func() ([]nn.Sequence, error) { return pool[:2], nil }}
	var err error
	for range 4 {
		if _, err = p.next(); err != nil {
			break
		}
	}
	if err == nil {
		t.Error("a redrawn pool of 2 sequences after 3: no error")
	}
}

// TestMixerRedraw checks that the mixture deals a source's pool drawn
// afresh (mixer.redraw) at the start of every pass after the first, and
// the first pass from the pool it was given.
func TestMixerRedraw(t *testing.T) {
	seq := func(i int) nn.Sequence { return nn.Sequence{Tokens: []int{i}} }
	c := &corpus{train: map[string][]nn.Sequence{srcShapesCells: {seq(0), seq(1), seq(2), seq(3)}}}
	m := newMixer(c, &Plan{Mix: map[string]int{srcShapesCells: 2}}, 1)
	draws := 0
	m.redraw = map[string]func() ([]nn.Sequence, error){srcShapesCells: func() ([]nn.Sequence, error) {
		draws++
		return []nn.Sequence{seq(10 * draws), seq(10*draws + 1), seq(10*draws + 2), seq(10*draws + 3)}, nil
	}}
	for pass := range 3 {
		var got []int
		for range 2 {
			b, err := m.batch()
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range b {
				got = append(got, s.Tokens[0])
			}
		}
		slices.Sort(got)
		if want := []int{10 * pass, 10*pass + 1, 10*pass + 2, 10*pass + 3}; !slices.Equal(got, want) {
			t.Fatalf("pass %d dealt %v, want %v", pass, got, want)
		}
	}
	if draws != 2 {
		t.Errorf("%d redraws in 3 passes, want 2", draws)
	}
}

// TestCellProbeForms checks CellProbe's order-free forms against a slow
// reference: the words of each form written out here from the scene key
// (sceneParts; the shuffled cells in the order the reference finds by
// reading each part's cell words), the model run again on the tokens
// before each scored word alone, the argmax taken by hand among the
// colour words, the shape words, "a" against "nothing" (descriptions,
// one cell) or "nothing" against the best colour (questions), and the
// attention of each colour word's predicting row split by the named
// cell's patches of the 4×4 grid (as in TestCellCaptions).
func TestCellProbeForms(t *testing.T) {
	d, exs, cfg, m := sharpenedCaptionModel(t, 6)
	v := datasets.Vocab()
	id := vocabID(t, v)
	colours := []string{"red", "green", "blue", "yellow", "purple", "cyan"}
	shapes := []string{"circle", "square", "triangle"}
	n := cfg.Patches() // 16: patch k (1-based) at LM position k, [CLS] at n+1
	own := [4][]int{{1, 2, 5, 6}, {3, 4, 7, 8}, {9, 10, 13, 14}, {11, 12, 15, 16}}
	best := func(l []float32, words []string) string {
		b := words[0]
		for _, w := range words {
			if l[id(w)] > l[id(b)] {
				b = w
			}
		}
		return b
	}
	for _, form := range []string{CellShuffled, CellAlone, CellQuestion} {
		got, err := CellProbe(m, append(slices.Clone(exs), d.Public[0]), form)
		if err != nil {
			t.Fatal(err)
		}
		var occ, col, shp, objects int
		att := make([][2]float64, cfg.Layers)
		for i, ex := range exs {
			key := ex.Items[0]
			parts, objs, names := sceneParts(key)
			// predict runs the prefix of text before word k and returns its
			// last row's logits and, per block, the attention on cell's
			// patches and on the other patches.
			predict := func(text string, k, cell int) ([]float32, [][2]float64) {
				toks := v.Encode(nil, text)
				T := k + n
				lg, probs := prefixForward(t, m, toks[:k], ex.Images)
				var a [][2]float64
				for b := range cfg.Layers {
					p := probs[b]
					heads := p.Shape[0]
					var sh [2]float64
					for hh := range heads {
						r := p.Data[hh*T*T+(T-1)*T : hh*T*T+T*T]
						for j := 1; j <= n; j++ {
							if slices.Contains(own[cell], j) {
								sh[0] += float64(r[j]) / float64(heads)
							} else {
								sh[1] += float64(r[j]) / float64(heads)
							}
						}
					}
					a = append(a, sh)
				}
				return lg, a
			}
			addAtt := func(a [][2]float64) {
				for b := range a {
					att[b][0] += a[b][0]
					att[b][1] += a[b][1]
				}
			}
			// describe scores a description or one cell's answer: text's
			// words from k on are "a COLOUR SHAPE" or "nothing" about cell.
			describe := func(text string, k, cell int) {
				ws := strings.Fields(text)
				l, _ := predict(text, k, cell)
				if best(l, []string{"a", "nothing"}) == ws[k] {
					occ++
				}
				if ws[k] == "nothing" {
					return
				}
				objects++
				l, a := predict(text, k+1, cell)
				if best(l, colours) == ws[k+1] {
					col++
				}
				addAtt(a)
				if l, _ := predict(text, k+2, cell); best(l, shapes) == ws[k+2] {
					shp++
				}
			}
			switch form {
			case CellShuffled:
				var order []string
				for _, c := range cellProbeOrders(len(exs))[i] {
					order = append(order, parts[c])
				}
				text := datasets.SceneCellPrompt + " " + strings.Join(order, " and ") + " <eos>"
				ws := strings.Fields(text)
				found := 0
				for k := len(strings.Fields(datasets.SceneCellPrompt)); k < len(ws); k++ {
					if ws[k] != "a" && ws[k] != "nothing" || ws[k-3] != "the" {
						continue
					}
					cell := slices.Index(names[:], ws[k-2]+" "+ws[k-1])
					if cell < 0 {
						t.Fatalf("%q: no cell named before word %d", text, k)
					}
					found++
					describe(text, k, cell)
				}
				if found != 4 {
					t.Fatalf("%q: %d cells, want 4", text, found)
				}
			case CellAlone:
				for cell := range 4 {
					prompt := "<bos> <image> what is at the " + names[cell] + " ?"
					describe(prompt+" "+strings.TrimPrefix(parts[cell], "at the "+names[cell]+" ")+" <eos>", len(strings.Fields(prompt)), cell)
				}
			case CellQuestion:
				for cell := range 4 {
					prompt := "<bos> <image> what colour is the object at the " + names[cell] + " ?"
					k := len(strings.Fields(prompt))
					l, a := predict(prompt+" x", k, cell)
					c := objs[cell][0]
					if (best(l, append([]string{"nothing"}, colours...)) == "nothing") == (c == "") {
						occ++
					}
					if c == "" {
						continue
					}
					objects++
					if best(l, colours) == c {
						col++
					}
					addAtt(a)
					prompt = "<bos> <image> what shape is the object at the " + names[cell] + " ?"
					if l, _ := predict(prompt+" x", k, cell); best(l, shapes) == objs[cell][1] {
						shp++
					}
				}
			}
		}
		want := CellScore{Scenes: len(exs), Objects: objects, Occupied: float64(occ) / float64(4*len(exs)),
			Colour: float64(col) / float64(objects), Shape: float64(shp) / float64(objects), Area: 0.25}
		if got.Scenes != want.Scenes || got.Objects != want.Objects || got.Occupied != want.Occupied ||
			got.Colour != want.Colour || got.Shape != want.Shape || got.Area != want.Area {
			t.Errorf("%s: CellProbe = %+v, want %+v", form, got, want)
		}
		if len(got.Attention) != cfg.Layers {
			t.Fatalf("%s: %d blocks of attention, want %d", form, len(got.Attention), cfg.Layers)
		}
		for b, s := range got.Attention {
			for j, g := range []float64{s.Own, s.Other} {
				if w := att[b][j] / float64(objects); math.Abs(g-w) > 1e-5 {
					t.Errorf("%s: block %d share %d = %.6f, want %.6f", form, b, j, g, w)
				}
			}
		}
		t.Logf("%s: %+v", form, got)
	}
	if _, err := CellProbe(m, exs, "bogus"); err == nil {
		t.Error("CellProbe(bogus): no error")
	}
}
