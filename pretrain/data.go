// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

// The public sources of the mixture, by the task whose public split they
// come from. iclSource names the in-context episodes, which are generated
// from the public Fashion-MNIST images of fashion-vqa and fashion-cls.
const (
	srcFashion = "fashion-vqa"
	srcShapes  = "shapes-vqa"
	// srcShapesQA is public shapes-vqa questions of every kind
	// (Plan.Mix of the shapes-questions variant, Plan.WithShapesQuestions).
	srcShapesQA = "shapes-qa"
	// srcShapesCells is the cell-first captions of the public shapes-vqa
	// scenes (Plan.Mix of the cell-captions variant, Plan.CaptionCells).
	srcShapesCells = "shapes-cells"
	srcCoarse      = "fashion-cls"
	srcRecords     = "records"
	srcICL         = "icl"
)

// dataTasks are the tasks whose public splits pretraining reads, in the
// order their fingerprints are listed. icl is built for its fingerprint and
// its episode shape (shots, ways); its episodes are regenerated from the
// training images (see episodes).
var dataTasks = []string{srcCoarse, srcFashion, srcRecords, srcShapes, srcICL, "fl-mm"}

// heldOut reports whether an example whose source items are items belongs
// to the held-out public evaluation set (datasets.PretrainHeldOut: 1 item in
// datasets.PretrainHeldOutEvery, by a hash of its name, so an image is held
// out in every task that uses it, at every seed and scale). The -tune
// tasks validate on these items, which the base never trains on.
func heldOut(items []string) bool { return datasets.PretrainHeldOut(items) }

// image is one public Fashion-MNIST image with its fine label, for
// in-context episodes.
type image struct {
	px    []float32
	class int
}

// corpus is the public mixture of one build: training sequences per source,
// held-out evaluation sequences, and the images in-context episodes are
// drawn from, grouped by fine class.
type corpus struct {
	data  map[string]*datasets.Dataset
	train map[string][]nn.Sequence
	// eval holds held-out sequences by metric name.
	eval map[string][]nn.Sequence
	// iclTrain and iclEval are the training and held-out public images by
	// fine class.
	iclTrain, iclEval [][]image
	shots, ways       int
	// tokens used to build episodes
	tSemi int
	words []int
	vocab *datasets.Vocabulary
}

// coarsePrompt is the prompt of coarse-label classification in the mixture.
// It differs from fashion-vqa's private "what kind of item is it ?" so that
// the private question format stays new to the base model.
const coarsePrompt = "<bos> <image> kind of item"

func toSeq(e *datasets.Example) nn.Sequence {
	s, m := e.Sequence()
	return nn.Sequence{Tokens: s, Images: e.Images, Loss: m}
}

// newCorpus splits the public data of the tasks (dataTasks, built by
// package datasets) into training and held-out parts.
func newCorpus(data map[string]*datasets.Dataset) (*corpus, error) {
	c := &corpus{
		data:  data,
		train: map[string][]nn.Sequence{},
		eval:  map[string][]nn.Sequence{},
		vocab: datasets.Vocab(),
	}
	v := c.vocab
	id := func(w string) int {
		i, ok := v.ID(w)
		if !ok {
			panic("pretrain: word missing from the vocabulary: " + w)
		}
		return i
	}
	c.tSemi = id(";")
	for _, w := range datasets.LabelWords() {
		c.words = append(c.words, id(w))
	}
	c.shots, c.ways = c.data[srcICL].Shots, len(c.data[srcICL].Classes)
	c.addSequences()
	if err := c.addEpisodeImages(); err != nil {
		return nil, err
	}
	c.addFashionEval()
	for l := range c.iclEval {
		if len(c.iclEval[l]) < c.shots+1 || len(c.iclTrain[l]) < c.shots+1 {
			return nil, fmt.Errorf("pretrain: too few public images of class %s for %d-shot episodes", datasets.FashionClasses[l], c.shots)
		}
	}
	return c, nil
}

// addSequences splits the public examples of the fashion, shapes, records
// and coarse-label sources into training and held-out sequences.
func (c *corpus) addSequences() {
	// Captions and class questions on fashion images; captions, counts and
	// existence questions on shape scenes; public records.
	for _, src := range []string{srcFashion, srcShapes, srcRecords} {
		for i := range c.data[src].Public {
			e := &c.data[src].Public[i]
			if heldOut(e.Items) {
				// Held-out fashion images are all measured, by addFashionEval.
				if src != srcFashion {
					c.eval[src] = append(c.eval[src], toSeq(e))
				}
				continue
			}
			c.train[src] = append(c.train[src], toSeq(e))
		}
	}
	// Coarse labels as a short generative task.
	d := c.data[srcCoarse]
	for i := range d.Public {
		e := &d.Public[i]
		if !heldOut(e.Items) {
			c.train[srcCoarse] = append(c.train[srcCoarse], c.question(e.Images[0], coarsePrompt, d.PublicClasses[e.Label]))
		}
	}
}

// addEpisodeImages fills c.iclTrain and c.iclEval, the images for
// episodes: every distinct public fashion image, with its fine label from
// the pool.
func (c *corpus) addEpisodeImages() error {
	dir := c.data[srcFashion].Source
	if dir == "embedded" {
		dir = ""
	}
	pool, err := datasets.LoadFashion(dir)
	if err != nil {
		return fmt.Errorf("pretrain: %w", err)
	}
	label := make(map[int]int, pool.Len())
	for i, o := range pool.Origin {
		label[int(o)] = int(pool.Labels[i])
	}
	c.iclTrain = make([][]image, len(datasets.FashionClasses))
	c.iclEval = make([][]image, len(datasets.FashionClasses))
	seen := map[string]bool{}
	for _, src := range []string{srcFashion, srcCoarse} {
		for _, e := range c.data[src].Public {
			it := e.Items[0]
			if seen[it] {
				continue
			}
			seen[it] = true
			o, err := strconv.Atoi(strings.TrimPrefix(it, "fmnist:"))
			if err != nil || !strings.HasPrefix(it, "fmnist:") {
				return fmt.Errorf("pretrain: unexpected fashion item %q", it)
			}
			l, ok := label[o]
			if !ok {
				return fmt.Errorf("pretrain: fashion item %q is not in the pool", it)
			}
			img := image{px: e.Images[0], class: l}
			if heldOut(e.Items) {
				c.iclEval[l] = append(c.iclEval[l], img)
			} else {
				c.iclTrain[l] = append(c.iclTrain[l], img)
			}
		}
	}
	return nil
}

// addFashionEval asks every held-out public fashion image, classes taken in
// turn (so that a prefix is balanced), its class (fashion-vqa's public
// question) and its coarse label.
func (c *corpus) addFashionEval() {
	for i, more := 0, true; more; i++ {
		more = false
		for l, imgs := range c.iclEval {
			if i >= len(imgs) {
				continue
			}
			more = true
			c.eval["fashion_class"] = append(c.eval["fashion_class"], c.question(imgs[i].px, "<bos> <image> what is the item ?", datasets.FashionClasses[l]))
			c.eval[srcCoarse] = append(c.eval[srcCoarse], c.question(imgs[i].px, coarsePrompt, datasets.FashionCoarse[datasets.FashionCoarseOf[l]]))
		}
	}
}

// question returns the sequence prompt → answer <eos> about img, with the
// loss on the answer.
func (c *corpus) question(img []float32, prompt, answer string) nn.Sequence {
	p := c.vocab.Encode(nil, prompt)
	a := c.vocab.Encode(nil, answer+" <eos>")
	s := nn.Sequence{Tokens: append(p, a...), Images: [][]float32{img}, Loss: make([]bool, len(p)+len(a))}
	for j := len(p); j < len(s.Loss); j++ {
		s.Loss[j] = true
	}
	return s
}

// episode is one in-context episode: demonstrations then a query.
type episode struct {
	seq nn.Sequence
	// words are the label words (token ids) of the episode's classes and
	// answer the index of the query's word among them.
	words  []int
	answer int
}

// newEpisode draws an episode of shots demonstrations and a query from
// imgs, in the format of the icl task of package datasets:
//
//	<bos> <image> W₁ ; … <image> W_N ; <image> W <eos>
//
// Its ways classes and their label words are drawn afresh, so a word means
// nothing outside its episode. With shots ≥ ways every class is shown at
// least once. The loss marks the answer and <eos>; with every, it also marks
// each demonstration's word whose class was already shown earlier in the
// episode (those are predictable in context too, which gives the model
// several in-context targets per episode).
func (c *corpus) newEpisode(rng *rand.Rand, imgs [][]image, shots int, every bool) episode {
	ways := c.ways
	cls := rng.Perm(len(imgs))[:ways]
	wi := rng.Perm(len(c.words))[:ways]
	words := make([]int, ways)
	for k := range words {
		words[k] = c.words[wi[k]]
	}
	demo := make([]int, shots)
	for i := range demo {
		if i < ways {
			demo[i] = i
		} else {
			demo[i] = rng.IntN(ways)
		}
	}
	rng.Shuffle(len(demo), func(i, j int) { demo[i], demo[j] = demo[j], demo[i] })
	used := map[*float32]bool{}
	take := func(k int) []float32 {
		pool := imgs[cls[k]]
		for {
			px := pool[rng.IntN(len(pool))].px
			if !used[&px[0]] {
				used[&px[0]] = true
				return px
			}
		}
	}
	var s nn.Sequence
	s.Tokens = append(s.Tokens, datasets.BOS)
	s.Loss = append(s.Loss, false)
	shown := make([]bool, ways)
	for _, k := range demo {
		s.Images = append(s.Images, take(k))
		s.Tokens = append(s.Tokens, datasets.Image, words[k], c.tSemi)
		s.Loss = append(s.Loss, false, every && shown[k], false)
		shown[k] = true
	}
	q := rng.IntN(ways)
	s.Images = append(s.Images, take(q))
	s.Tokens = append(s.Tokens, datasets.Image, words[q], datasets.EOS)
	s.Loss = append(s.Loss, false, true, true)
	return episode{seq: s, words: words, answer: q}
}

// zeroShot returns the episode's query alone: <bos> <image> W <eos>.
func (e episode) zeroShot() nn.Sequence {
	n := len(e.seq.Tokens)
	return nn.Sequence{
		Tokens: append([]int{datasets.BOS}, e.seq.Tokens[n-3:]...),
		Images: e.seq.Images[len(e.seq.Images)-1:],
		Loss:   []bool{false, false, true, true},
	}
}

// trainShots returns the number of demonstrations of p's training
// episodes: Plan.TrainShots, or the icl task's.
func (c *corpus) trainShots(p *Plan) int {
	if p.TrainShots > 0 {
		return p.TrainShots
	}
	return c.shots
}

// mixer deals the training batches: each batch holds a fixed number of
// examples of every source (Plan.Mix), taken in a per-source order that is
// reshuffled after every pass; in-context episodes are drawn afresh.
type mixer struct {
	c     *corpus
	shots int
	mix   []mixPart
	rng   *rand.Rand
	order map[string][]int
	next  map[string]int
	// srcs is the source of each sequence of the last batch.
	srcs []string
	// redraw, when not nil, returns a source's pool afresh at the start
	// of every pass over it after the first (the cell forms with
	// shuffled descriptions or fresh scenes, Plan.CaptionForm).
	redraw map[string]func() ([]nn.Sequence, error)
}

type mixPart struct {
	src string
	n   int
}

func newMixer(c *corpus, p *Plan, seed uint64) *mixer {
	m := &mixer{c: c, shots: c.trainShots(p), rng: rand.New(rand.NewPCG(seed, streamBatches)), order: map[string][]int{}, next: map[string]int{}}
	for _, src := range []string{srcFashion, srcShapes, srcShapesQA, srcShapesCells, srcCoarse, srcRecords, srcICL} {
		if n := p.Mix[src]; n > 0 {
			m.mix = append(m.mix, mixPart{src, n})
		}
	}
	return m
}

// batch returns the next batch. It returns an error only if a pool
// cannot be drawn afresh (mixer.redraw).
func (m *mixer) batch() ([]nn.Sequence, error) {
	var b []nn.Sequence
	m.srcs = m.srcs[:0]
	for _, part := range m.mix {
		for range part.n {
			m.srcs = append(m.srcs, part.src)
		}
		if part.src == srcICL {
			for range part.n {
				b = append(b, m.c.newEpisode(m.rng, m.c.iclTrain, m.shots, true).seq)
			}
			continue
		}
		data := m.c.train[part.src]
		for range part.n {
			if m.next[part.src] == len(m.order[part.src]) {
				if f := m.redraw[part.src]; f != nil && m.order[part.src] != nil {
					var err error
					if data, err = f(); err != nil {
						return nil, err
					}
					m.c.train[part.src] = data
				}
				m.order[part.src] = m.rng.Perm(len(data))
				m.next[part.src] = 0
			}
			b = append(b, data[m.order[part.src][m.next[part.src]]])
			m.next[part.src]++
		}
	}
	return b, nil
}

// publicScenes returns the public shapes-vqa examples of every distinct
// scene that pretraining trains on (not held out), the first of each
// scene's examples, in the public split's order.
func (c *corpus) publicScenes() []datasets.Example {
	var scenes []datasets.Example
	seen := map[string]bool{}
	for _, e := range c.data[srcShapes].Public {
		if heldOut(e.Items) || seen[e.Items[0]] {
			continue
		}
		seen[e.Items[0]] = true
		scenes = append(scenes, e)
	}
	return scenes
}

// sceneObjects returns stage 1's scene images (Plan.VisionScenes): every
// object of every public shapes-vqa scene that pretraining trains on (not
// held out), alone in its image (datasets.CellImage), with the class
// first plus its colour and shape class (datasets.SceneCells).
func (c *corpus) sceneObjects(first int) ([]image, error) {
	var objs []image
	for _, e := range c.publicScenes() {
		cells, ok := datasets.SceneCells(e.Items[0])
		if !ok || len(e.Images) != 1 {
			return nil, fmt.Errorf("pretrain: %s is not a scene with one image", e.ID)
		}
		for cell, class := range cells {
			if class >= 0 {
				objs = append(objs, image{px: datasets.CellImage(e.Images[0], cell), class: first + class})
			}
		}
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("pretrain: no public scene objects for the vision stage")
	}
	return objs, nil
}

// addShapesQuestions fills c.train[srcShapesQA] (Plan.Mix of the
// shapes-questions variant): a question of each kind of the private task
// (datasets.ShapesKinds) about every public shapes-vqa scene that
// pretraining trains on (not held out), each with the scene's image and
// drawn from the stream seed, streamShapesQA. The scenes are public
// (their layouts never appear in a private split), so, as LLaVA's
// instruction mixture holds GQA's training questions, the base learns the
// task's question kinds on public data, and the -tune validation scenes,
// held out, stay unseen.
func (c *corpus) addShapesQuestions(seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, streamShapesQA))
	var seqs []nn.Sequence
	for _, e := range c.publicScenes() {
		if len(e.Images) != 1 {
			return fmt.Errorf("pretrain: %s is not a scene with one image", e.ID)
		}
		for _, kind := range datasets.ShapesKinds() {
			p, a, ok := datasets.SceneQuestion(e.Items[0], kind, rng)
			if !ok {
				return fmt.Errorf("pretrain: %s: no %s question about %q", e.ID, kind, e.Items[0])
			}
			seqs = append(seqs, c.question(e.Images[0], p, strings.TrimSuffix(a, " <eos>")))
		}
	}
	if len(seqs) == 0 {
		return fmt.Errorf("pretrain: no public scenes for the shapes questions")
	}
	c.train[srcShapesQA] = seqs
	return nil
}

// sceneCaptionPrompt is the prompt of shapes-vqa's public captions.
const sceneCaptionPrompt = "<bos> <image> describe the scene ."

// captions returns the captions-only stage's pool (Plan.CaptionSteps):
// the caption of every public shapes-vqa scene that pretraining trains on
// (not held out; datasets.SceneCaption, the scenes of the public split's
// questions as well as of its captions, each once) and every public
// fashion-vqa caption example that it trains on, in the public splits'
// order.
//
// With cells the scene captions are cell-first (datasets.SceneCellCaption
// after datasets.SceneCellPrompt; Plan.CaptionCells).
func (c *corpus) captions(cells bool) ([]nn.Sequence, error) {
	caps, err := c.sceneCaptions(cells)
	if err != nil {
		return nil, err
	}
	return c.withFashionCaptions(caps), nil
}

// withFashionCaptions returns caps followed by every public fashion-vqa
// caption example that pretraining trains on, in the public split's
// order.
func (c *corpus) withFashionCaptions(caps []nn.Sequence) []nn.Sequence {
	for i := range c.data[srcFashion].Public {
		if e := &c.data[srcFashion].Public[i]; e.Kind == "caption" && !heldOut(e.Items) {
			caps = append(caps, toSeq(e))
		}
	}
	return caps
}

// addCellCaptions fills c.train[srcShapesCells] (Plan.Mix of the
// cell-captions variant) with the cell-first caption of every public
// scene that pretraining trains on.
func (c *corpus) addCellCaptions() error {
	return c.addCellForm("", nil)
}

// addCellForm fills c.train[srcShapesCells] with cellSequences(form,
// rng).
func (c *corpus) addCellForm(form string, rng *rand.Rand) error {
	cells, err := c.cellSequences(form, rng)
	if err != nil {
		return err
	}
	c.train[srcShapesCells] = cells
	return nil
}

// captionsIn is captions with the cell-first scene captions in form
// (cellSequences; rng draws the shuffled orders).
func (c *corpus) captionsIn(form string, rng *rand.Rand) ([]nn.Sequence, error) {
	caps, err := c.cellSequences(form, rng)
	if err != nil {
		return nil, err
	}
	return c.withFashionCaptions(caps), nil
}

// cellSequences returns the cell-first sequences about every public
// shapes-vqa scene that pretraining trains on (not held out), in the
// public split's order, in form (Plan.CaptionForm): for "" the
// description with the cells in their fixed order (sceneCaptions), else,
// scene by scene, for each part of the form: "shuffled", the description
// with the cells in an order drawn from rng (every call draws afresh);
// "single", the four one-cell sequences ("what is at the top left ?" →
// "a red circle" or "nothing"); "questions", the colour-at and shape-at
// questions about each of the four cells, in shapes-vqa's words. With
// "fresh" in form, each public scene is replaced by a public layout drawn
// from rng (datasets.NewPublicScene; every call draws afresh), as many
// scenes.
func (c *corpus) cellSequences(form string, rng *rand.Rand) ([]nn.Sequence, error) {
	parts, err := CellFormParts(form)
	if err != nil {
		return nil, err
	}
	if parts == nil {
		return c.sceneCaptions(true)
	}
	var seqs []nn.Sequence
	scenes := c.publicScenes()
	fresh := slices.Contains(parts, formFresh)
	for _, e := range scenes {
		key := e.Items[0]
		if _, ok := datasets.SceneCells(key); !ok || len(e.Images) != 1 {
			return nil, fmt.Errorf("pretrain: %s is not a scene with one image", e.ID)
		}
		img := e.Images[0]
		if fresh {
			key, img = datasets.NewPublicScene(rng)
		}
		for _, part := range parts {
			switch part {
			case formShuffled:
				var order [4]int
				for j, cell := range rng.Perm(4) {
					order[j] = cell
				}
				text, _ := datasets.SceneCellOrderCaption(key, order)
				seqs = append(seqs, c.question(img, datasets.SceneCellPrompt, text))
			case formSingle:
				for cell := range 4 {
					a, _ := datasets.SceneOneCell(key, cell)
					seqs = append(seqs, c.question(img, datasets.SceneOneCellPrompt(cell), a))
				}
			case formQuestions:
				for cell := range 4 {
					for _, kind := range []string{"colour-at", "shape-at"} {
						p, a, _ := datasets.SceneAtQuestion(key, kind, cell)
						seqs = append(seqs, c.question(img, p, strings.TrimSuffix(a, " <eos>")))
					}
				}
			}
		}
	}
	if len(scenes) == 0 {
		return nil, fmt.Errorf("pretrain: no public scenes to describe")
	}
	return seqs, nil
}

// sceneCaptions returns the scene part of captions' pool: the caption of
// every public shapes-vqa scene that pretraining trains on, cell-first
// with cells.
func (c *corpus) sceneCaptions(cells bool) ([]nn.Sequence, error) {
	var caps []nn.Sequence
	scenes := c.publicScenes()
	caption, prompt := datasets.SceneCaption, sceneCaptionPrompt
	if cells {
		caption, prompt = datasets.SceneCellCaption, datasets.SceneCellPrompt
	}
	for _, e := range scenes {
		text, ok := caption(e.Items[0])
		if !ok || len(e.Images) != 1 {
			return nil, fmt.Errorf("pretrain: %s is not a scene with one image", e.ID)
		}
		caps = append(caps, c.question(e.Images[0], prompt, text))
	}
	if len(scenes) == 0 {
		return nil, fmt.Errorf("pretrain: no public scenes to caption")
	}
	return caps, nil
}
