// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
)

// shapeRGB are the colours of shapeColours.
var shapeRGB = [][3]float32{{1, 0.1, 0.1}, {0.1, 0.9, 0.1}, {0.15, 0.3, 1}, {1, 0.95, 0.1}, {0.7, 0.2, 0.9}, {0.1, 0.9, 0.95}}

// Object is one shape in a Scene.
type Object struct {
	Colour, Kind int // indices into the colour and shape word lists
	Cell         int // 0 top left, 1 top right, 2 bottom left, 3 bottom right
	X, Y, R      float64
}

// Scene is a CLEVR-like synthetic scene: one to four coloured circles,
// squares and triangles, each in its own cell of a 2×2 grid on a black
// background.
type Scene struct{ Objects []Object }

// NewScene draws a scene from rng.
func NewScene(rng *rand.Rand) Scene {
	n := 1 + rng.IntN(4)
	cells := rng.Perm(4)[:n]
	s := Scene{Objects: make([]Object, n)}
	for i, c := range cells {
		s.Objects[i] = Object{
			Colour: rng.IntN(len(shapeColours)),
			Kind:   rng.IntN(len(shapeKinds)),
			Cell:   c,
			X:      float64(float64(c%2)*14) + 7 + (float64(rng.Float64()*3) - 1.5),
			Y:      float64(float64(c/2)*14) + 7 + (float64(rng.Float64()*3) - 1.5),
			R:      4 + float64(rng.Float64()*1.5),
		}
	}
	return s
}

// key describes the scene's objects by cell, ignoring jitter; two scenes
// with the same key answer every question alike.
func (s Scene) key() string {
	var cells [4]string
	for i := range cells {
		cells[i] = "-"
	}
	for _, o := range s.Objects {
		cells[o.Cell] = shapeColours[o.Colour] + "." + shapeKinds[o.Kind]
	}
	return "shapes:" + strings.Join(cells[:], ",")
}

// at returns the object in cell, or nil.
func (s Scene) at(cell int) *Object {
	for i := range s.Objects {
		if s.Objects[i].Cell == cell {
			return &s.Objects[i]
		}
	}
	return nil
}

// Render draws the scene as a new RGB CHW float32 image of length ImageLen.
// A pixel belongs to a shape when its centre lies inside it.
func (s Scene) Render() []float32 {
	const plane = ImageSize * ImageSize
	img := make([]float32, ImageLen)
	for _, o := range s.Objects {
		rgb := shapeRGB[o.Colour]
		// Only pixels within R+1 of the centre can be inside.
		x0, x1 := max(0, int(o.X-o.R-1)), min(ImageSize, int(o.X+o.R+2))
		y0, y1 := max(0, int(o.Y-o.R-1)), min(ImageSize, int(o.Y+o.R+2))
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				px, py := float64(x)+0.5-o.X, float64(y)+0.5-o.Y
				in := false
				switch o.Kind {
				case 0: // circle
					in = float64(px*px)+float64(py*py) <= o.R*o.R
				case 1: // square
					h := o.R * 0.85
					in = px >= -h && px <= h && py >= -h && py <= h
				case 2: // triangle, apex up
					in = py >= -o.R && py <= o.R && 2*abs(px) <= py+o.R
				}
				if in {
					for c := range 3 {
						img[c*plane+y*ImageSize+x] = rgb[c]
					}
				}
			}
		}
	}
	return img
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// Caption describes the scene in cell order: "a red circle at the top left
// and a blue square at the bottom right".
func (s Scene) Caption() string {
	var parts []string
	for cell := range 4 {
		if o := s.at(cell); o != nil {
			parts = append(parts, "a "+shapeColours[o.Colour]+" "+shapeKinds[o.Kind]+" at the "+shapeCells[cell])
		}
	}
	return strings.Join(parts, " and ")
}

// Question kinds of shapes-vqa: all of them in the private task, only the
// simplest in the public split.
var (
	shapeKindsAll    = []string{"count", "count-colour", "count-shape", "count-both", "exist", "colour-at", "shape-at"}
	publicShapeKinds = []string{"count", "exist"}
)

// question draws a compositional question of one of kinds about s and
// returns its kind, text and answer.
func (s Scene) question(rng *rand.Rand, kinds []string) (kind, q, a string) {
	count := func(match func(o Object) bool) string {
		n := 0
		for _, o := range s.Objects {
			if match(o) {
				n++
			}
		}
		return numberWords[n]
	}
	// Pick an attribute from a present object half of the time, so counts
	// and existence questions are not mostly "zero" and "no".
	ref := s.Objects[rng.IntN(len(s.Objects))]
	col, kin := ref.Colour, ref.Kind
	if rng.IntN(2) == 0 {
		col, kin = rng.IntN(len(shapeColours)), rng.IntN(len(shapeKinds))
	}
	switch kind = pick(rng, kinds); kind {
	case "count":
		return kind, "how many objects are there ?", numberWords[len(s.Objects)]
	case "count-colour":
		return kind, "how many " + shapeColours[col] + " objects are there ?", count(func(o Object) bool { return o.Colour == col })
	case "count-shape":
		return kind, "how many " + shapePlural[kin] + " are there ?", count(func(o Object) bool { return o.Kind == kin })
	case "count-both":
		return kind, "how many " + shapeColours[col] + " " + shapePlural[kin] + " are there ?",
			count(func(o Object) bool { return o.Colour == col && o.Kind == kin })
	case "exist":
		a = "no"
		for _, o := range s.Objects {
			if o.Colour == col && o.Kind == kin {
				a = "yes"
			}
		}
		return kind, "is there a " + shapeColours[col] + " " + shapeKinds[kin] + " ?", a
	}
	cell := ref.Cell
	if rng.IntN(4) == 0 {
		cell = rng.IntN(4)
	}
	q, a = s.atQuestion(kind, cell)
	return kind, q, a
}

// buildShapesVQA builds shapes-vqa, a GQA stand-in: compositional questions
// (counts by colour and shape, existence, colour and shape by position)
// about generated scenes, one question per scene. Public: half scene
// captions ("<image> describe the scene ." → Scene.Caption), half counting
// and existence questions, so the base model knows the words and the
// question format but not the five other kinds of question. No scene (by object layout) appears in
// two splits or twice in one, and layouts are divided between public and
// private use by a hash (isPublicKey), so no seed's public scenes are
// another seed's private ones. Canaries are noise images with secret codes.
func buildShapesVQA(d *Dataset, b *buildCtx) error {
	const task = "shapes-vqa"
	b.sizes = imageSizes[d.Scale]
	d.Source, d.Generative = "generated", true
	scenes := b.rng(task, "scenes")
	qs := b.rng(task, "questions")
	seen := make(map[string]bool)
	next := func(public bool) Scene {
		for {
			s := NewScene(scenes)
			if k := s.key(); !seen[k] && isPublicKey(k) == public {
				seen[k] = true
				return s
			}
		}
	}
	// With Options.ShapesBalanced each private-side example draws its
	// kind and answer first (balancedTarget) and then private layouts
	// until one answers so: the answers of a kind are uniform, as GQA's
	// balanced split evens out its answer distributions, so that the
	// majority answer is worth little and a margin over it means the
	// image was read. The public split is drawn as without it, so the
	// bases, which pretrain on it, are the same.
	// The private layouts that answer a kind with a given answer are
	// finite (two-object layouts, which alone answer count "two", are
	// 6·18² = 1 944, three fifths of them private): after balancedDraws
	// scenes without one the build fails instead of drawing forever.
	balanced := b.opt.ShapesBalanced
	var exhausted error
	b.buildSplits(d, SplitNames, func(split string, i int) Example {
		public := split == "public"
		if balanced && !public {
			if exhausted != nil {
				return Example{}
			}
			kind, target := balancedTarget(qs)
			for range balancedDraws {
				s := NewScene(scenes)
				k := s.key()
				if seen[k] || isPublicKey(k) {
					continue
				}
				_, q, a := s.question(qs, []string{kind})
				if a != target {
					continue
				}
				seen[k] = true
				ex := newExample(exampleID(task, split, i))
				ex.Items = []string{k}
				ex.Images = [][]float32{s.Render()}
				ex.Kind = kind
				ex.Prompt = b.vocab.Encode(nil, "<bos> <image> "+q)
				ex.Answer = b.vocab.Encode(nil, a+" <eos>")
				return ex
			}
			exhausted = fmt.Errorf("datasets: %s: %s example %d: no unused private scene layout answers a %s question with %q in %d draws (balanced answers need more layouts than %s scale has)",
				task, split, i, kind, target, balancedDraws, d.Scale)
			return Example{}
		}
		s := next(public)
		ex := newExample(exampleID(task, split, i))
		ex.Items = []string{s.key()}
		ex.Images = [][]float32{s.Render()}
		kinds := shapeKindsAll
		if public {
			if qs.IntN(2) == 0 {
				ex.Kind = "caption"
				ex.Prompt = b.vocab.Encode(nil, "<bos> <image> describe the scene .")
				ex.Answer = b.vocab.Encode(nil, s.Caption()+" <eos>")
				return ex
			}
			kinds = publicShapeKinds
		}
		kind, q, a := s.question(qs, kinds)
		ex.Kind = kind
		ex.Prompt = b.vocab.Encode(nil, "<bos> <image> "+q)
		ex.Answer = b.vocab.Encode(nil, a+" <eos>")
		return ex
	})
	if exhausted != nil {
		return exhausted
	}
	b.addCanaries(d, b.imageSecretCanary)
	return nil
}

// balancedAnswers are the answers of each question kind that the balanced
// private questions (Options.ShapesBalanced) draw uniformly: the answers
// that scenes of one to four objects give often enough to be drawn by
// rejection (two objects of one colour and shape are about one scene in
// forty; three or four of one colour rarer still, and left out). A count
// of one is left out too: there are 72 one-object layouts, and no layout
// is used twice.
var balancedAnswers = map[string][]string{
	"count":        {"two", "three", "four"},
	"count-colour": {"zero", "one", "two"},
	"count-shape":  {"zero", "one", "two", "three"},
	"count-both":   {"zero", "one", "two"},
	"exist":        {"yes", "no"},
	"colour-at":    append(slices.Clone(shapeColours), "nothing"),
	"shape-at":     append(slices.Clone(shapeKinds), "nothing"),
}

// balancedDraws is the number of scenes the balanced private questions
// (Options.ShapesBalanced) draw for one example before the build fails.
// The rarest answer a fresh scene gives (count-both "two") is about one
// draw in 24.
const balancedDraws = 1 << 22

// balancedTarget draws a question kind uniformly, then its answer
// uniformly from balancedAnswers.
func balancedTarget(rng *rand.Rand) (kind, answer string) {
	kind = pick(rng, shapeKindsAll)
	return kind, pick(rng, balancedAnswers[kind])
}

// isPublicKey divides generated items between public and private use once
// and for all (about 40% public) by a hash of their key.
func isPublicKey(key string) bool {
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()%5 < 2
}

// SceneObjectClasses is the number of object classes SceneCells reports:
// one per colour and shape.
var SceneObjectClasses = len(shapeColours) * len(shapeKinds)

// SceneAttributes returns the numbers of colours and shapes of scene
// objects: SceneCells' class c is colour c/shapes, shape c%shapes.
func SceneAttributes() (colours, shapes int) { return len(shapeColours), len(shapeKinds) }

// SceneWords returns the colour and shape words of the scenes, in the
// order of SceneCells' classes (colour·len(shapes) + shape).
func SceneWords() (colours, shapes []string) {
	return slices.Clone(shapeColours), slices.Clone(shapeKinds)
}

// SceneCells parses the item key of a shapes-vqa scene ("shapes:" and the
// four cells' contents, as Example.Items holds it) into the object class
// of each cell, colour·(number of shapes) + shape, -1 for an empty cell.
// ok is false when key is not a scene key.
func SceneCells(key string) (cells [4]int, ok bool) {
	rest, found := strings.CutPrefix(key, "shapes:")
	parts := strings.Split(rest, ",")
	if !found || len(parts) != len(cells) {
		return cells, false
	}
	for i, p := range parts {
		cells[i] = -1
		if p == "-" {
			continue
		}
		col, kin, found := strings.Cut(p, ".")
		c, k := slices.Index(shapeColours, col), slices.Index(shapeKinds, kin)
		if !found || c < 0 || k < 0 {
			return cells, false
		}
		cells[i] = c*len(shapeKinds) + k
	}
	return cells, true
}

// CellImage returns a copy of the rendered scene img with every pixel
// outside cell (0 top left … 3 bottom right, the 14×14 quadrants of the
// image) set to the background: the scene's object in that cell alone.
// Objects lie inside their cells (centres within 1.5 pixels of the cell's
// centre, radius at most 5.5), so the copy is the scene rendered with that
// object only.
func CellImage(img []float32, cell int) []float32 {
	const plane, half = ImageSize * ImageSize, ImageSize / 2
	out := make([]float32, len(img))
	x0, y0 := (cell%2)*half, (cell/2)*half
	for c := range len(img) / plane {
		for y := y0; y < y0+half; y++ {
			i := c*plane + y*ImageSize
			copy(out[i+x0:i+x0+half], img[i+x0:i+x0+half])
		}
	}
	return out
}

// SceneCaption returns the caption of the scene whose item key is key (as
// Example.Items holds it): Scene.Caption of its layout, "a red circle at
// the top left and …", the answer of the public split's caption examples
// without "<eos>". ok is false when key is not a scene key or names no
// object. Pretraining's captions-only stage uses it to caption every
// public scene, those the public split asks a question about as well.
func SceneCaption(key string) (caption string, ok bool) {
	s, ok := sceneOf(key)
	if !ok {
		return "", false
	}
	return s.Caption(), true
}

// SceneCellPrompt is the prompt of the cell-first scene descriptions
// (SceneCellCaption): it names the four cells, in their order, before the
// answer describes them.
const SceneCellPrompt = "<bos> <image> what is at the top left , top right , bottom left and bottom right ?"

// SceneCellCaption returns the cell-first description of the scene whose
// item key is key: every cell in order (0 top left … 3 bottom right), its
// position words first and then what it holds, "at the top left a red
// circle and at the top right nothing and …", so that each colour and
// shape word comes after the words that name its cell, and reading it
// needs that cell's patches only. (Scene.Caption names an object's colour
// before its cell.) ok is false when key is not a scene key or names no
// object. Pretraining's captions-only stage can train on it
// (pretrain.Plan.CaptionCells).
func SceneCellCaption(key string) (caption string, ok bool) {
	return SceneCellOrderCaption(key, [4]int{0, 1, 2, 3})
}

// SceneCellOrderCaption is SceneCellCaption with the cells described in
// order (a permutation of 0 … 3: order[0] first): "at the bottom right a
// cyan triangle and at the top left …". With the cells in a random order,
// only a cell's words, not its place in the description, tell which cell
// a colour word describes. ok is false when key is not a scene key or
// names no object, or order is not a permutation of the cells.
func SceneCellOrderCaption(key string, order [4]int) (caption string, ok bool) {
	s, ok := sceneOf(key)
	if !ok {
		return "", false
	}
	var seen [4]bool
	parts := make([]string, len(shapeCells))
	for i, cell := range order {
		if cell < 0 || cell >= len(shapeCells) || seen[cell] {
			return "", false
		}
		seen[cell] = true
		parts[i] = "at the " + shapeCells[cell] + " " + s.cellWhat(cell)
	}
	return strings.Join(parts, " and "), true
}

// cellWhat names what cell of s holds: "a red circle", or "nothing".
func (s Scene) cellWhat(cell int) string {
	if o := s.at(cell); o != nil {
		return "a " + shapeColours[o.Colour] + " " + shapeKinds[o.Kind]
	}
	return "nothing"
}

// NewPublicScene draws scenes from rng until one has a public layout that
// pretraining may train on (public by the hash that divides layouts
// between public and private use, and not held out of pretraining,
// PretrainHeldOut) and returns its item key and its image (Scene.Render).
// No private layout, and no layout of the -tune validation splits, is
// ever returned; the public layouts (tens of thousands) are far more than a
// public split holds, so a stream of them shows a model many scenes it
// cannot have memorised.
func NewPublicScene(rng *rand.Rand) (key string, img []float32) {
	for {
		s := NewScene(rng)
		if k := s.key(); isPublicKey(k) && !PretrainHeldOut([]string{k}) {
			return k, s.Render()
		}
	}
}

// SceneOneCellPrompt returns the prompt that names one cell (0 top left …
// 3 bottom right) of a scene, "<bos> <image> what is at the bottom right
// ?", which SceneOneCell answers: one named cell a sequence, so that
// nothing but the cell's words tells the model where to look.
func SceneOneCellPrompt(cell int) string {
	return "<bos> <image> what is at the " + shapeCells[cell] + " ?"
}

// SceneOneCell returns what the cell (0 … 3) of the scene whose item key
// is key holds, "a red circle" or "nothing": the answer to
// SceneOneCellPrompt(cell). ok is false when key is not a scene key or
// names no object, or cell is not a cell.
func SceneOneCell(key string, cell int) (answer string, ok bool) {
	s, ok := sceneOf(key)
	if !ok || cell < 0 || cell >= len(shapeCells) {
		return "", false
	}
	return s.cellWhat(cell), true
}

// SceneAtQuestion poses the colour-at or shape-at question (kind) about
// one cell (0 … 3) of the scene whose item key is key, in the words of
// shapes-vqa's questions of that kind ("what colour is the object at the
// top left ?"), and returns its prompt and answer token strings as
// SceneQuestion does ("<bos> <image> …", "red <eos>" or "nothing
// <eos>"). Unlike SceneQuestion it draws nothing: the caller picks the
// cell. ok is false when key is not a scene key or names no object, kind
// is neither colour-at nor shape-at, or cell is not a cell.
func SceneAtQuestion(key, kind string, cell int) (prompt, answer string, ok bool) {
	s, ok := sceneOf(key)
	if !ok || (kind != "colour-at" && kind != "shape-at") || cell < 0 || cell >= len(shapeCells) {
		return "", "", false
	}
	q, a := s.atQuestion(kind, cell)
	return "<bos> <image> " + q, a + " <eos>", true
}

// atQuestion returns the colour-at or shape-at question (kind) about cell
// of s and its answer.
func (s Scene) atQuestion(kind string, cell int) (q, a string) {
	o, a := s.at(cell), "nothing"
	if kind == "colour-at" {
		if o != nil {
			a = shapeColours[o.Colour]
		}
		return "what colour is the object at the " + shapeCells[cell] + " ?", a
	}
	if o != nil {
		a = shapeKinds[o.Kind]
	}
	return "what shape is the object at the " + shapeCells[cell] + " ?", a
}

// sceneOf returns the layout of the scene whose item key is key (objects,
// colours and cells; no jitter or size), or false when key is not a scene
// key or names no object.
func sceneOf(key string) (Scene, bool) {
	cells, ok := SceneCells(key)
	if !ok {
		return Scene{}, false
	}
	var s Scene
	for cell, class := range cells {
		if class >= 0 {
			s.Objects = append(s.Objects, Object{Colour: class / len(shapeKinds), Kind: class % len(shapeKinds), Cell: cell})
		}
	}
	return s, len(s.Objects) > 0
}

// ShapesKinds returns the question kinds of shapes-vqa's private split, in
// a fixed order.
func ShapesKinds() []string { return slices.Clone(shapeKindsAll) }

// SceneQuestion poses a shapes-vqa question of kind (one of ShapesKinds)
// about the scene whose item key is key (as Example.Items holds it), drawn
// from rng as the task draws its own, and returns its prompt and answer
// token strings ("<bos> <image> …", "… <eos>"). ok is false when key is
// not a scene key or kind is unknown. The answers depend on the layout
// alone, which the key holds (objects, colours and cells, not the jitter
// of their positions), so the question fits every rendering of the scene.
// Pretraining uses it to add public questions of every kind about public
// scenes to its mixture (as LLaVA's mixture holds GQA's training
// questions).
func SceneQuestion(key, kind string, rng *rand.Rand) (prompt, answer string, ok bool) {
	s, ok := sceneOf(key)
	if !ok || !slices.Contains(shapeKindsAll, kind) {
		return "", "", false
	}
	_, q, a := s.question(rng, []string{kind})
	return "<bos> <image> " + q, a + " <eos>", true
}
