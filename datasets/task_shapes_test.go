// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestCellImage checks CellImage against the reference of rendering the
// scene with one object alone, for every object of many random scenes
// (objects as large and as far from their cell's centre as NewScene
// draws them), and that the other cells of the copy are background.
func TestCellImage(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		s := NewScene(rng)
		img := s.Render()
		for _, o := range s.Objects {
			want := Scene{Objects: []Object{o}}.Render()
			if got := CellImage(img, o.Cell); !slices.Equal(got, want) {
				t.Fatalf("CellImage(%s, cell %d) differs from the object rendered alone", s.key(), o.Cell)
			}
		}
		for cell := range 4 {
			if s.at(cell) != nil {
				continue
			}
			for i, v := range CellImage(img, cell) {
				if v != 0 {
					t.Fatalf("CellImage(%s, empty cell %d)[%d] = %g, want background", s.key(), cell, i, v)
				}
			}
		}
	}
}

// TestSceneCells checks SceneCells against the scenes' objects, and that
// it refuses keys that are not scene keys.
func TestSceneCells(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		s := NewScene(rng)
		cells, ok := SceneCells(s.key())
		if !ok {
			t.Fatalf("SceneCells(%q): not ok", s.key())
		}
		want := [4]int{-1, -1, -1, -1}
		for _, o := range s.Objects {
			want[o.Cell] = o.Colour*len(shapeKinds) + o.Kind
		}
		if cells != want {
			t.Fatalf("SceneCells(%q) = %v, want %v", s.key(), cells, want)
		}
		for _, c := range cells {
			if c >= SceneObjectClasses {
				t.Fatalf("SceneCells(%q): class %d ≥ %d", s.key(), c, SceneObjectClasses)
			}
		}
	}
	for _, k := range []string{"fmnist:12", "shapes:-,-,-", "shapes:red.circle,-,-,pink.circle", "shapes:red,-,-,-", "shapes:red.cube,-,-,-"} {
		if _, ok := SceneCells(k); ok {
			t.Errorf("SceneCells(%q): ok, want refused", k)
		}
	}
}

// TestSceneQuestion checks SceneQuestion's answers against a reference
// that reads each question's words and answers it from the generated
// scene itself (its objects as NewScene drew them, jitter included), for
// every kind on many scenes; that each kind's question has its kind's
// form; and that it refuses keys that are not scenes and unknown kinds.
func TestSceneQuestion(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	qs := rand.New(rand.NewPCG(7, 8))
	answers := map[string]map[string]bool{}
	for range 300 {
		s := NewScene(rng)
		for _, kind := range ShapesKinds() {
			p, a, ok := SceneQuestion(s.key(), kind, qs)
			if !ok {
				t.Fatalf("SceneQuestion(%q, %s): not ok", s.key(), kind)
			}
			gotKind, want := referenceAnswer(s, p)
			if gotKind != kind {
				t.Fatalf("SceneQuestion(%q, %s) asked %q, a question of kind %q", s.key(), kind, p, gotKind)
			}
			if a != want+" <eos>" {
				t.Fatalf("SceneQuestion(%q, %s): %q answered %q, want %q", s.key(), kind, p, a, want+" <eos>")
			}
			if answers[kind] == nil {
				answers[kind] = map[string]bool{}
			}
			answers[kind][want] = true
		}
	}
	// Every kind has more than one answer over the scenes: the questions
	// depend on the scene.
	for kind, as := range answers {
		if len(as) < 2 {
			t.Errorf("kind %s: answers %v, want several", kind, as)
		}
	}
	for _, c := range []struct{ key, kind string }{{"fmnist:3", "count"}, {"shapes:-,-,-,-", "count"}, {"shapes:red.circle,-,-,-", "caption"}} {
		if _, _, ok := SceneQuestion(c.key, c.kind, qs); ok {
			t.Errorf("SceneQuestion(%q, %s): ok, want refused", c.key, c.kind)
		}
	}
}

// referenceAnswer is the tests' reference for shapes-vqa's answers: the
// kind of the question prompt q ("<bos> <image> … ?") and its answer about
// s, found by reading q's words.
func referenceAnswer(s Scene, q string) (kind, a string) {
	q = strings.TrimSuffix(strings.TrimPrefix(q, "<bos> <image> "), " ?")
	count := func(match func(o Object) bool) string {
		n := 0
		for _, o := range s.Objects {
			if match(o) {
				n++
			}
		}
		return numberWords[n]
	}
	if q == "how many objects are there" {
		return "count", count(func(Object) bool { return true })
	}
	if rest, ok := strings.CutPrefix(q, "how many "); ok {
		words := strings.Fields(strings.TrimSuffix(rest, " are there"))
		col, kin := -1, -1
		for _, w := range words {
			if i := slices.Index(shapeColours, w); i >= 0 {
				col = i
			}
			if i := slices.Index(shapePlural, w); i >= 0 {
				kin = i
			}
		}
		kind := map[[2]bool]string{{true, false}: "count-colour", {false, true}: "count-shape", {true, true}: "count-both"}[[2]bool{col >= 0, kin >= 0}]
		return kind, count(func(o Object) bool { return (col < 0 || o.Colour == col) && (kin < 0 || o.Kind == kin) })
	}
	if rest, ok := strings.CutPrefix(q, "is there a "); ok {
		w := strings.Fields(rest)
		a := "no"
		for _, o := range s.Objects {
			if len(w) == 2 && shapeColours[o.Colour] == w[0] && shapeKinds[o.Kind] == w[1] {
				a = "yes"
			}
		}
		return "exist", a
	}
	for _, k := range []string{"colour", "shape"} {
		if rest, ok := strings.CutPrefix(q, "what "+k+" is the object at the "); ok {
			cell := slices.Index(shapeCells, rest)
			if cell < 0 {
				return "", ""
			}
			o := s.at(cell)
			switch {
			case o == nil:
				return k + "-at", "nothing"
			case k == "colour":
				return k + "-at", shapeColours[o.Colour]
			default:
				return k + "-at", shapeKinds[o.Kind]
			}
		}
	}
	return "", ""
}

// TestShapesBalanced checks Options.ShapesBalanced on shapes-vqa and
// shapes-vqa-tune at small: every private-side question's answer agrees
// with the reference (referenceAnswer on the scene its item key
// describes), each kind's answers are the balanced ones and each is drawn
// within 30% of its uniform share, and the public split is the unbalanced
// build's, example for example (so the base models, which pretrain on it,
// are the same).
func TestShapesBalanced(t *testing.T) {
	t.Parallel()
	v := Vocab()
	for _, task := range []string{"shapes-vqa", "shapes-vqa-tune"} {
		bal, err := Build(task, &Options{Scale: Small, Seed: 1, ShapesBalanced: true})
		if err != nil {
			t.Fatal(err)
		}
		plain, err := Build(task, &Options{Scale: Small, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(bal.Public) != len(plain.Public) {
			t.Fatalf("%s: %d public examples balanced, %d not", task, len(bal.Public), len(plain.Public))
		}
		for i := range bal.Public {
			a, b := &bal.Public[i], &plain.Public[i]
			if a.ID != b.ID || !slices.Equal(a.Prompt, b.Prompt) || !slices.Equal(a.Answer, b.Answer) || !slices.Equal(a.Items, b.Items) {
				t.Fatalf("%s: public example %d differs when balanced", task, i)
			}
		}
		if bal.Fingerprint() == plain.Fingerprint() {
			t.Errorf("%s: balanced and unbalanced builds share a fingerprint", task)
		}
		counts := map[string]map[string]int{}
		for _, split := range [][]Example{bal.Private, bal.Holdout, bal.Test} {
			for i := range split {
				ex := &split[i]
				if ex.Canary >= 0 {
					continue
				}
				cells, ok := SceneCells(ex.Items[0])
				if !ok {
					t.Fatalf("%s: %s: item %q is not a scene", task, ex.ID, ex.Items[0])
				}
				var s Scene
				for cell, class := range cells {
					if class >= 0 {
						s.Objects = append(s.Objects, Object{Colour: class / len(shapeKinds), Kind: class % len(shapeKinds), Cell: cell})
					}
				}
				q, a := v.Decode(ex.Prompt), strings.TrimSuffix(v.Decode(ex.Answer), " <eos>")
				kind, want := referenceAnswer(s, q)
				if kind != ex.Kind || a != want {
					t.Fatalf("%s: %s: %q answered %q (kind %s), reference %q (kind %s)", task, ex.ID, q, a, ex.Kind, want, kind)
				}
				if counts[kind] == nil {
					counts[kind] = map[string]int{}
				}
				counts[kind][a]++
			}
		}
		for _, kind := range ShapesKinds() {
			answers := balancedAnswers[kind]
			n := 0
			for _, c := range counts[kind] {
				n += c
			}
			for a, c := range counts[kind] {
				if !slices.Contains(answers, a) {
					t.Errorf("%s: %s answered %q %d times, not a balanced answer", task, kind, a, c)
				}
			}
			for _, a := range answers {
				share, uniform := float64(counts[kind][a])/float64(n), 1/float64(len(answers))
				if share < 0.7*uniform || share > 1.3*uniform {
					t.Errorf("%s: %s answers %q %.3f of %d times, uniform %.3f", task, kind, a, share, n, uniform)
				}
			}
		}
	}
}

// TestShapesBalancedFullFails checks that shapes-vqa with balanced answers
// at the full scale fails instead of drawing scenes forever: its 40 000
// private-side questions ask count "two" about 40 000/21 ≈ 1 900 times
// (one kind in seven, one answer in three), and only two-object layouts
// answer it, 6·18² = 1 944 of them, of which 1 195 are private
// (isPublicKey), each used at most once.
func TestShapesBalancedFullFails(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the full scale's splits")
	}
	t.Parallel()
	_, err := Build("shapes-vqa", &Options{Scale: Full, Seed: 1, ShapesBalanced: true})
	if err == nil || !strings.Contains(err.Error(), "no unused private scene layout") {
		t.Fatalf("shapes-vqa, balanced, full: error %v, want one saying the private layouts ran out", err)
	}
}

// TestSceneCaption checks SceneCaption against the public split's own
// captions (the reference: the answers buildShapesVQA wrote from the
// scenes it drew, decoded), scene by scene, and that it refuses what is
// not a scene key or an empty scene.
func TestSceneCaption(t *testing.T) {
	t.Parallel()
	d, err := Build("shapes-vqa", &Options{Scale: Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	v := Vocab()
	n := 0
	for _, ex := range d.Public {
		if ex.Kind != "caption" {
			continue
		}
		got, ok := SceneCaption(ex.Items[0])
		if want := v.Decode(ex.Answer); !ok || got+" <eos>" != want {
			t.Fatalf("SceneCaption(%q) = %q, %v; want %q", ex.Items[0], got, ok, want)
		}
		n++
	}
	if n < 100 {
		t.Fatalf("%d public captions at smoke, want at least 100", n)
	}
	for _, key := range []string{"fmnist:3", "shapes:-,-,-,-", "shapes:red.circle,-,-", "shapes:pink.circle,-,-,-"} {
		if c, ok := SceneCaption(key); ok {
			t.Errorf("SceneCaption(%q) = %q, ok; want refused", key, c)
		}
	}
}

// TestSceneCellCaption checks the cell-first descriptions against the
// layout written out by hand and against SceneCells: each cell, in order,
// names the object SceneCells gives it, or nothing; every word is in the
// vocabulary.
func TestSceneCellCaption(t *testing.T) {
	t.Parallel()
	got, ok := SceneCellCaption("shapes:red.circle,-,-,cyan.triangle")
	want := "at the top left a red circle and at the top right nothing and at the bottom left nothing and at the bottom right a cyan triangle"
	if !ok || got != want {
		t.Fatalf("SceneCellCaption = %q, %v; want %q", got, ok, want)
	}
	d, err := Build("shapes-vqa", &Options{Scale: Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	v := Vocab()
	for _, text := range []string{SceneCellPrompt} {
		for _, id := range v.Encode(nil, text) {
			if id == Unk {
				t.Fatalf("%q has a word outside the vocabulary", text)
			}
		}
	}
	for _, ex := range d.Public {
		key := ex.Items[0]
		cells, ok := SceneCells(key)
		if !ok {
			continue
		}
		got, ok := SceneCellCaption(key)
		if !ok {
			t.Fatalf("SceneCellCaption(%q) refused", key)
		}
		for _, id := range v.Encode(nil, got) {
			if id == Unk {
				t.Fatalf("SceneCellCaption(%q) = %q has a word outside the vocabulary", key, got)
			}
		}
		parts := strings.Split(got, " and ")
		if len(parts) != 4 {
			t.Fatalf("SceneCellCaption(%q) = %q: %d cells, want 4", key, got, len(parts))
		}
		for i, p := range parts {
			w := "nothing"
			if c := cells[i]; c >= 0 {
				w = "a " + shapeColours[c/len(shapeKinds)] + " " + shapeKinds[c%len(shapeKinds)]
			}
			if want := "at the " + shapeCells[i] + " " + w; p != want {
				t.Fatalf("SceneCellCaption(%q) cell %d = %q, want %q", key, i, p, want)
			}
		}
	}
	for _, key := range []string{"fmnist:3", "shapes:-,-,-,-", "shapes:pink.circle,-,-,-"} {
		if c, ok := SceneCellCaption(key); ok {
			t.Errorf("SceneCellCaption(%q) = %q, ok; want refused", key, c)
		}
	}
}

// TestSceneCellForms checks the order-free cell forms against
// SceneCellCaption and against the shapes-vqa reference answers: a
// permuted description holds SceneCellCaption's cell parts in the order
// given; one named cell is answered with that cell's part after "at the
// CELL "; a colour-at or shape-at question about a cell is a question of
// that kind that referenceAnswer (which reads the question's words)
// answers as SceneAtQuestion does; and every word is in the vocabulary.
func TestSceneCellForms(t *testing.T) {
	t.Parallel()
	got, ok := SceneCellOrderCaption("shapes:red.circle,-,-,cyan.triangle", [4]int{3, 0, 2, 1})
	want := "at the bottom right a cyan triangle and at the top left a red circle and at the bottom left nothing and at the top right nothing"
	if !ok || got != want {
		t.Fatalf("SceneCellOrderCaption = %q, %v; want %q", got, ok, want)
	}
	v := Vocab()
	inVocab := func(text string) {
		t.Helper()
		for _, id := range v.Encode(nil, text) {
			if id == Unk {
				t.Fatalf("%q has a word outside the vocabulary", text)
			}
		}
	}
	rng := rand.New(rand.NewPCG(9, 10))
	kinds := map[string]map[string]bool{}
	for range 200 {
		s := NewScene(rng)
		key := s.key()
		canon, ok := SceneCellCaption(key)
		if !ok {
			t.Fatalf("SceneCellCaption(%q) refused", key)
		}
		parts := strings.Split(canon, " and ")
		var order [4]int
		for i, c := range rng.Perm(4) {
			order[i] = c
		}
		perm, ok := SceneCellOrderCaption(key, order)
		if !ok {
			t.Fatalf("SceneCellOrderCaption(%q, %v) refused", key, order)
		}
		for i, p := range strings.Split(perm, " and ") {
			if p != parts[order[i]] {
				t.Fatalf("SceneCellOrderCaption(%q, %v) part %d = %q, want %q", key, order, i, p, parts[order[i]])
			}
		}
		for cell := range 4 {
			prompt := SceneOneCellPrompt(cell)
			inVocab(prompt)
			a, ok := SceneOneCell(key, cell)
			if !ok {
				t.Fatalf("SceneOneCell(%q, %d) refused", key, cell)
			}
			inVocab(a)
			if want := "at the " + shapeCells[cell] + " " + a; want != parts[cell] {
				t.Fatalf("SceneOneCell(%q, %d) = %q, the description's cell part is %q", key, cell, a, parts[cell])
			}
			if !strings.HasSuffix(prompt, "at the "+shapeCells[cell]+" ?") {
				t.Fatalf("SceneOneCellPrompt(%d) = %q names another cell", cell, prompt)
			}
			for _, kind := range []string{"colour-at", "shape-at"} {
				p, a, ok := SceneAtQuestion(key, kind, cell)
				if !ok {
					t.Fatalf("SceneAtQuestion(%q, %s, %d) refused", key, kind, cell)
				}
				inVocab(p + " " + a)
				gotKind, want := referenceAnswer(s, p)
				if gotKind != kind || a != want+" <eos>" {
					t.Fatalf("SceneAtQuestion(%q, %s, %d) = %q → %q; the reference reads a %s question answered %q", key, kind, cell, p, a, gotKind, want)
				}
				if kinds[kind] == nil {
					kinds[kind] = map[string]bool{}
				}
				kinds[kind][want] = true
			}
		}
	}
	// Every colour and shape, and "nothing", is an answer.
	colours, shapes := SceneWords()
	if len(kinds["colour-at"]) != len(colours)+1 || len(kinds["shape-at"]) != len(shapes)+1 {
		t.Errorf("answers %v, want every colour and shape and nothing", kinds)
	}
	for _, c := range []struct {
		key   string
		order [4]int
	}{{"fmnist:3", [4]int{0, 1, 2, 3}}, {"shapes:red.circle,-,-,-", [4]int{0, 1, 1, 3}}, {"shapes:red.circle,-,-,-", [4]int{0, 1, 2, 4}}} {
		if got, ok := SceneCellOrderCaption(c.key, c.order); ok {
			t.Errorf("SceneCellOrderCaption(%q, %v) = %q, ok; want refused", c.key, c.order, got)
		}
	}
	if got, ok := SceneOneCell("shapes:red.circle,-,-,-", 4); ok {
		t.Errorf("SceneOneCell(cell 4) = %q, ok; want refused", got)
	}
	for _, c := range []struct {
		key, kind string
		cell      int
	}{{"fmnist:3", "colour-at", 0}, {"shapes:red.circle,-,-,-", "count", 0}, {"shapes:red.circle,-,-,-", "shape-at", -1}} {
		if p, _, ok := SceneAtQuestion(c.key, c.kind, c.cell); ok {
			t.Errorf("SceneAtQuestion(%q, %s, %d) = %q, ok; want refused", c.key, c.kind, c.cell, p)
		}
	}
}

// TestNewPublicScene checks the public scenes drawn for pretraining:
// every key is a public layout (isPublicKey) not held out of pretraining,
// the draws are mostly distinct layouts (1,330 of 2,000 with this seed), and each image holds colour in
// exactly the cells its key fills (datasets.CellImage of each cell against
// SceneCells).
func TestNewPublicScene(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	seen := map[string]bool{}
	const n = 2000
	for range n {
		key, img := NewPublicScene(rng)
		if !isPublicKey(key) || PretrainHeldOut([]string{key}) {
			t.Fatalf("NewPublicScene drew %q: public %v, held out %v", key, isPublicKey(key), PretrainHeldOut([]string{key}))
		}
		cells, ok := SceneCells(key)
		if !ok || len(img) != ImageLen {
			t.Fatalf("NewPublicScene drew %q (a scene: %v) with %d values, want %d", key, ok, len(img), ImageLen)
		}
		for cell, class := range cells {
			var sum float64
			for _, v := range CellImage(img, cell) {
				sum += float64(v)
			}
			if (sum > 0) != (class >= 0) {
				t.Fatalf("%q: cell %d holds class %d but its pixels sum to %v", key, cell, class, sum)
			}
		}
		seen[key] = true
	}
	// A quarter of the scenes hold one object, whose public layouts are
	// few (72 layouts, public or not); the others are rarely drawn twice.
	if len(seen) < n*3/5 {
		t.Errorf("%d distinct layouts in %d draws, want more than %d", len(seen), n, n*3/5)
	}
}
