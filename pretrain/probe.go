// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

// Probe is the accuracy of one linear probe of ProbeScenes.
type Probe struct {
	// Features names what the probe reads: "pixels" (the cell's 14×14 RGB
	// pixels), "encoder" (the frozen vision encoder's output rows of the
	// patches whose centres lie in the cell, concatenated), "tokens" (the
	// projected visual tokens of those patches, what the language model
	// reads) or "init-encoder" (the encoder rows of the model as
	// initialised from its configuration's seed, before any training), or
	// "cls" (the encoder's [CLS] row, placed in the block of the cell's
	// index among four, so that the probe is one linear map per cell: what
	// the image's summary token tells of each cell).
	Features string
	// Target is "colour" (six colours or an empty cell) or "shape" (three
	// shapes or an empty cell).
	Target string
	// Dims is the number of features.
	Dims int
	// Train and Held are the accuracies (fractions) on the probe's
	// training cells and on the held-out cells; Chance is the held-out
	// share of the most frequent training class.
	Train, Held, Chance float64
	// VarShare is the share of the features' total variance (the trace of
	// their covariance over the training cells, unstandardised) that the
	// target's class means explain: how loud the target is in the
	// features, where Held says whether it can be read at all.
	VarShare float64
}

// ProbeScenes fits linear probes (multinomial logistic regression) that
// read the colour and the shape of the object in each cell of shapes-vqa
// scenes from m's frozen visual features, and from the pixels as a
// reference: whether the features the language model gets can tell the
// colours and shapes apart at all. If the encoder's features cannot, no
// fine-tuning of the language model will answer colour questions.
//
// train and held are scene examples (Example.Items[0] a scene key, one
// image); each scene counts once. The probes are fitted on train's cells
// and scored on held's. It returns an error if a key is not a scene key or
// the patches do not divide evenly among the four cells.
func ProbeScenes(m *nn.TinyMLLM, train, held []datasets.Example) ([]Probe, error) {
	init, err := nn.NewTinyMLLM(m.Config)
	if err != nil {
		return nil, fmt.Errorf("pretrain: probe: %w", err)
	}
	cells, err := patchCells(m.Config)
	if err != nil {
		return nil, err
	}
	nColours, nShapes := datasets.SceneAttributes()
	type set struct {
		x      map[string][][]float64
		colour []int
		shape  []int
	}
	collect := func(exs []datasets.Example) (set, error) {
		s := set{x: map[string][][]float64{}}
		seen := map[string]bool{}
		for i := range exs {
			ex := &exs[i]
			if len(ex.Items) == 0 || len(ex.Images) != 1 || seen[ex.Items[0]] {
				continue
			}
			seen[ex.Items[0]] = true
			classes, ok := datasets.SceneCells(ex.Items[0])
			if !ok {
				return s, fmt.Errorf("pretrain: probe: example %s: %q is not a scene key", ex.ID, ex.Items[0])
			}
			img := ex.Images[0]
			enc, tok := visualRows(m, img)
			enc0, _ := visualRows(init, img)
			for cell, class := range classes {
				col, shp := nColours, nShapes // an empty cell
				if class >= 0 {
					col, shp = class/nShapes, class%nShapes
				}
				s.colour = append(s.colour, col)
				s.shape = append(s.shape, shp)
				s.x["pixels"] = append(s.x["pixels"], cellPixels(img, cell))
				s.x["encoder"] = append(s.x["encoder"], gatherRows(enc, cells[cell]))
				s.x["tokens"] = append(s.x["tokens"], gatherRows(tok, cells[cell]))
				s.x["init-encoder"] = append(s.x["init-encoder"], gatherRows(enc0, cells[cell]))
				cls := make([]float64, 4*enc.Shape[1])
				copy(cls[cell*enc.Shape[1]:], gatherRows(enc, []int{0}))
				s.x["cls"] = append(s.x["cls"], cls)
			}
		}
		return s, nil
	}
	tr, err := collect(train)
	if err != nil {
		return nil, err
	}
	he, err := collect(held)
	if err != nil {
		return nil, err
	}
	if len(tr.colour) == 0 || len(he.colour) == 0 {
		return nil, fmt.Errorf("pretrain: probe: no scenes (%d training cells, %d held-out cells)", len(tr.colour), len(he.colour))
	}
	var out []Probe
	for _, f := range []string{"pixels", "encoder", "tokens", "init-encoder", "cls"} {
		for _, tg := range []struct {
			name     string
			classes  int
			tr, held []int
		}{
			{"colour", nColours + 1, tr.colour, he.colour},
			{"shape", nShapes + 1, tr.shape, he.shape},
		} {
			w := fitSoftmax(tr.x[f], tg.tr, tg.classes)
			out = append(out, Probe{Features: f, Target: tg.name, Dims: len(tr.x[f][0]),
				Train: w.accuracy(tr.x[f], tg.tr), Held: w.accuracy(he.x[f], tg.held),
				Chance: majorityShare(tg.tr, tg.held, tg.classes), VarShare: varShare(tr.x[f], tg.tr, tg.classes)})
		}
	}
	return out, nil
}

// WriteProbes prints probes as an aligned table.
func WriteProbes(w io.Writer, probes []Probe) error {
	if _, err := fmt.Fprintf(w, "%-13s %-7s %5s %7s %7s %7s %9s\n", "features", "target", "dims", "train", "held", "chance", "variance"); err != nil {
		return err
	}
	for _, p := range probes {
		if _, err := fmt.Fprintf(w, "%-13s %-7s %5d %6.1f%% %6.1f%% %6.1f%% %8.1f%%\n", p.Features, p.Target, p.Dims, 100*p.Train, 100*p.Held, 100*p.Chance, 100*p.VarShare); err != nil {
			return err
		}
	}
	return nil
}

// patchCells returns, for each of the four 14×14 cells of a scene, the
// rows (1-based after [CLS]) of the encoder output whose patch centre lies
// in the cell, in row order. Every cell must get as many patches.
func patchCells(cfg nn.Config) ([4][]int, error) {
	var cells [4][]int
	g := cfg.ImageSize / cfg.Patch
	half := float64(cfg.ImageSize) / 2
	for r := range g {
		for c := range g {
			cx, cy := (float64(c)+0.5)*float64(cfg.Patch), (float64(r)+0.5)*float64(cfg.Patch)
			cell := 0
			if cx >= half {
				cell++
			}
			if cy >= half {
				cell += 2
			}
			cells[cell] = append(cells[cell], 1+r*g+c)
		}
	}
	for _, c := range cells[1:] {
		if len(c) != len(cells[0]) {
			return cells, fmt.Errorf("pretrain: probe: %d-pixel patches do not divide the four cells evenly", cfg.Patch)
		}
	}
	return cells, nil
}

// visualRows returns m's vision encoder output and projected visual tokens
// of img ([CLS] first, every patch), computed without gradients, as copies
// that outlive the tape (whose memory a later tape may reuse).
func visualRows(m *nn.TinyMLLM, img []float32) (enc, tok nn.Tensor) {
	t := nn.NewTape(nil, nil)
	v, _ := m.EncodeImage(t, img, 0, false, nil, nil)
	clone := func(x nn.Tensor) nn.Tensor {
		return nn.Tensor{Shape: slices.Clone(x.Shape), Data: slices.Clone(x.Data)}
	}
	return clone(v.Encoder.Value), clone(v.Tokens.Value)
}

// gatherRows concatenates rows of x ([rows, cols]) as float64.
func gatherRows(x nn.Tensor, rows []int) []float64 {
	c := x.Shape[1]
	out := make([]float64, 0, len(rows)*c)
	for _, r := range rows {
		for _, v := range x.Data[r*c : (r+1)*c] {
			out = append(out, float64(v))
		}
	}
	return out
}

// cellPixels returns the RGB pixels of cell (0 top left … 3 bottom right)
// of a scene image, channel by channel, row by row.
func cellPixels(img []float32, cell int) []float64 {
	const size, half = datasets.ImageSize, datasets.ImageSize / 2
	x0, y0 := (cell%2)*half, (cell/2)*half
	var out []float64
	for c := range len(img) / (size * size) {
		for y := y0; y < y0+half; y++ {
			for x := x0; x < x0+half; x++ {
				out = append(out, float64(img[c*size*size+y*size+x]))
			}
		}
	}
	return out
}

// varShare returns the between-class share of the total variance of x:
// Σⱼ Σₖ (nₖ/N)(x̄ₖⱼ − x̄ⱼ)² / Σⱼ Var(xⱼ), the R² of predicting every
// feature by its class mean (0 when x does not vary).
func varShare(x [][]float64, y []int, classes int) float64 {
	d, n := len(x[0]), float64(len(x))
	mean := make([]float64, d)
	cm := make([][]float64, classes)
	cn := make([]float64, classes)
	for k := range cm {
		cm[k] = make([]float64, d)
	}
	for i, r := range x {
		cn[y[i]]++
		for j, v := range r {
			mean[j] += v
			cm[y[i]][j] += v
		}
	}
	var total, between float64
	for j := range mean {
		mean[j] /= n
	}
	for _, r := range x {
		for j, v := range r {
			total += float64((v - mean[j]) * (v - mean[j]))
		}
	}
	for k := range cm {
		if cn[k] == 0 {
			continue
		}
		for j := range cm[k] {
			dm := cm[k][j]/cn[k] - mean[j]
			between += float64(cn[k] * dm * dm)
		}
	}
	if total == 0 {
		return 0
	}
	return between / total
}

// CaptionScore is how well a base describes scenes it never trained on
// (Captions).
type CaptionScore struct {
	// Captions is the number of scenes captioned; Objects the number of
	// objects they hold.
	Captions, Objects int
	// Count is the share of captions that name as many objects as the
	// scene has; Position the share of objects that the caption puts in
	// their cell; Colour and Shape the shares of objects whose cell the
	// caption names with the object's colour, or its shape.
	Count, Position, Colour, Shape float64
}

// Captions greedily decodes m's caption of every held-out public scene
// among exs (shapes-vqa's public split: "<image> describe the scene ." →
// "a red circle at the top left and …", held out of pretraining by
// datasets.PretrainHeldOut) and scores it object by object against the
// reference caption: whether the base reads the colours and shapes it
// was pretrained to describe. It returns an error if no example is a
// held-out caption.
func Captions(m *nn.TinyMLLM, exs []datasets.Example) (CaptionScore, error) {
	voc := datasets.Vocab()
	var s CaptionScore
	var count, pos, col, shp int
	for i := range exs {
		ex := &exs[i]
		if ex.Kind != "caption" || !datasets.PretrainHeldOut(ex.Items) {
			continue
		}
		p := nn.Sequence{Tokens: ex.Prompt, Images: ex.Images}
		out, err := m.Generate(&p, len(ex.Answer)+8, nn.Sampler{}, nil, nil, nil)
		if err != nil {
			return s, fmt.Errorf("pretrain: caption of %s: %w", ex.ID, err)
		}
		got, want := captionObjects(voc.Decode(out)), captionObjects(voc.Decode(ex.Answer))
		s.Captions++
		if len(got) == len(want) {
			count++
		}
		for cell, w := range want {
			s.Objects++
			g, ok := got[cell]
			if !ok {
				continue
			}
			pos++
			if g[0] == w[0] {
				col++
			}
			if g[1] == w[1] {
				shp++
			}
		}
	}
	if s.Captions == 0 {
		return s, fmt.Errorf("pretrain: no held-out scene captions among %d examples", len(exs))
	}
	s.Count = float64(count) / float64(s.Captions)
	s.Position = float64(pos) / float64(s.Objects)
	s.Colour = float64(col) / float64(s.Objects)
	s.Shape = float64(shp) / float64(s.Objects)
	return s, nil
}

// captionObjects parses a scene caption ("a red circle at the top left
// and a blue square at the bottom right <eos>") into the colour and shape
// named for each cell ("top left" → {"red", "circle"}); words that do not
// fit the pattern are skipped.
func captionObjects(text string) map[string][2]string {
	ws := strings.Fields(text)
	out := map[string][2]string{}
	for i := 0; i+6 < len(ws); i++ {
		if ws[i] == "a" && ws[i+3] == "at" && ws[i+4] == "the" {
			out[ws[i+5]+" "+ws[i+6]] = [2]string{ws[i+1], ws[i+2]}
		}
	}
	return out
}

// majorityShare returns the share of held whose class is the most frequent
// class of train (the lowest on ties).
func majorityShare(train, held []int, classes int) float64 {
	n := make([]int, classes)
	for _, y := range train {
		n[y]++
	}
	best := 0
	for k := range n {
		if n[k] > n[best] {
			best = k
		}
	}
	hit := 0
	for _, y := range held {
		if y == best {
			hit++
		}
	}
	return float64(hit) / float64(len(held))
}

// softmaxProbe is a fitted multinomial logistic regression on
// standardised features.
type softmaxProbe struct {
	mean, scale []float64
	w           [][]float64 // [classes][dims+1], the bias last
}

// Settings of fitSoftmax: full-batch Adam on the mean cross-entropy plus
// probeL2·‖w‖²/2 (biases excluded).
const (
	probeSteps = 500
	probeLR    = 0.05
	probeL2    = 1e-3
)

// fitSoftmax fits a softmax regression of y (classes values) on x by
// full-batch Adam (Kingma and Ba, "Adam: A Method for Stochastic
// Optimization", ICLR 2015, Algorithm 1) from zero weights. The features
// are standardised with the training mean and standard deviation.
func fitSoftmax(x [][]float64, y []int, classes int) *softmaxProbe {
	d := len(x[0])
	p := &softmaxProbe{mean: make([]float64, d), scale: make([]float64, d), w: make([][]float64, classes)}
	for _, r := range x {
		for j, v := range r {
			p.mean[j] += v
		}
	}
	for j := range p.mean {
		p.mean[j] /= float64(len(x))
	}
	for _, r := range x {
		for j, v := range r {
			p.scale[j] += float64((v - p.mean[j]) * (v - p.mean[j]))
		}
	}
	for j := range p.scale {
		sd := math.Sqrt(p.scale[j] / float64(len(x)))
		p.scale[j] = 0
		if sd > 1e-8 {
			p.scale[j] = 1 / sd
		}
	}
	z := make([][]float64, len(x))
	for i, r := range x {
		z[i] = p.standardise(r)
	}
	g, m1, m2 := make([][]float64, classes), make([][]float64, classes), make([][]float64, classes)
	for k := range classes {
		p.w[k], g[k], m1[k], m2[k] = make([]float64, d+1), make([]float64, d+1), make([]float64, d+1), make([]float64, d+1)
	}
	const b1, b2, eps = 0.9, 0.999, 1e-8
	prob := make([]float64, classes)
	for step := 1; step <= probeSteps; step++ {
		for k := range g {
			clear(g[k])
		}
		for i, r := range z {
			p.probs(r, prob)
			prob[y[i]]--
			for k := range classes {
				e := prob[k] / float64(len(z))
				for j, v := range r {
					g[k][j] += float64(e * v)
				}
				g[k][d] += e
			}
		}
		c1, c2 := 1-math.Pow(b1, float64(step)), 1-math.Pow(b2, float64(step))
		for k := range classes {
			for j := range g[k] {
				gj := g[k][j]
				if j < d {
					gj += float64(probeL2 * p.w[k][j])
				}
				m1[k][j] = float64(b1*m1[k][j]) + float64((1-b1)*gj)
				m2[k][j] = float64(b2*m2[k][j]) + float64((1-b2)*gj*gj)
				p.w[k][j] -= probeLR * (m1[k][j] / c1) / (math.Sqrt(m2[k][j]/c2) + eps)
			}
		}
	}
	return p
}

func (p *softmaxProbe) standardise(r []float64) []float64 {
	z := make([]float64, len(r))
	for j, v := range r {
		z[j] = (v - p.mean[j]) * p.scale[j]
	}
	return z
}

// probs writes the class probabilities of the standardised features z
// into out.
func (p *softmaxProbe) probs(z, out []float64) {
	d := len(z)
	top := math.Inf(-1)
	for k, w := range p.w {
		s := w[d]
		for j, v := range z {
			s += float64(w[j] * v)
		}
		out[k] = s
		top = max(top, s)
	}
	sum := 0.0
	for k := range out {
		out[k] = math.Exp(out[k] - top)
		sum += out[k]
	}
	for k := range out {
		out[k] /= sum
	}
}

// accuracy returns the share of x whose most likely class is y's.
func (p *softmaxProbe) accuracy(x [][]float64, y []int) float64 {
	prob := make([]float64, len(p.w))
	hit := 0
	for i, r := range x {
		p.probs(p.standardise(r), prob)
		best := 0
		for k := range prob {
			if prob[k] > prob[best] {
				best = k
			}
		}
		if best == y[i] {
			hit++
		}
	}
	return float64(hit) / float64(len(x))
}

// AttentionShare is where the language model's attention goes in one of
// its blocks from the positions that predict the colour words of scene
// captions (CaptionAttention): the mean, over heads and colour words, of
// the attention on the patch tokens of the cell of the object the word
// names (Own), on the image's other patch tokens (Other), on its [CLS]
// token (CLS) and on the text (Text). The four sum to 1.
type AttentionShare struct {
	Block                 int
	Own, Other, CLS, Text float64
}

// sceneCellNames are the cells of a scene caption in datasets.SceneCells'
// order (0 top left … 3 bottom right).
var sceneCellNames = [4]string{"top left", "top right", "bottom left", "bottom right"}

// CaptionAttention teacher-forces the reference caption of every held-out
// public scene among exs (as Captions picks them) through m and returns,
// per block of the language model, where the attention of the positions
// that predict a colour word goes (AttentionShare): whether the language
// model looks at the cell of the object whose colour it names. Attention
// blind to the cells puts on the object's own cell the cell's share of the
// patches of Own+Other (area, a quarter). It returns an error if no
// example is a held-out caption or the patches do not divide evenly among
// the four cells.
func CaptionAttention(m *nn.TinyMLLM, exs []datasets.Example) (shares []AttentionShare, area float64, err error) {
	cells, err := patchCells(m.Config)
	if err != nil {
		return nil, 0, err
	}
	n := m.Config.Patches()
	area = float64(len(cells[0])) / float64(n)
	voc := datasets.Vocab()
	sum := map[string][4]float64{}
	words := 0
	for i := range exs {
		ex := &exs[i]
		if ex.Kind != "caption" || !datasets.PretrainHeldOut(ex.Items) {
			continue
		}
		s := nn.Sequence{Tokens: append(slices.Clone(ex.Prompt), ex.Answer...), Images: ex.Images}
		probs := map[string]nn.Tensor{}
		h := &nn.Hooks{Observe: func(site string, x nn.Tensor) {
			if strings.HasPrefix(site, "lm.") && strings.HasSuffix(site, ".attn.probs") {
				probs[site] = nn.Tensor{Shape: slices.Clone(x.Shape), Data: slices.Clone(x.Data)}
			}
		}}
		_, pos, err := m.Forward(nn.NewTape(nil, nil), &s, nil, h, nil)
		if err != nil {
			return nil, 0, fmt.Errorf("pretrain: attention of %s: %w", ex.ID, err)
		}
		img := slices.Index(s.Tokens, datasets.Image)
		// patch j (the encoder's row j, 1-based) and [CLS] in the language
		// model's order (pos gives the first visual token).
		patch := func(j int) int { return pos[img] + j }
		cls := pos[img]
		if m.Config.CLSLast {
			patch = func(j int) int { return pos[img] + j - 1 }
			cls = pos[img] + n
		}
		ws := make([]string, len(ex.Answer))
		for j, id := range ex.Answer {
			ws[j] = voc.Decode([]int{id})
		}
		for j := 0; j+6 < len(ws); j++ {
			if ws[j] != "a" || ws[j+3] != "at" || ws[j+4] != "the" {
				continue
			}
			cell := slices.Index(sceneCellNames[:], ws[j+5]+" "+ws[j+6])
			if cell < 0 {
				continue
			}
			row := pos[len(ex.Prompt)+j+1] - 1 // predicts the colour word
			words++
			addShares(sum, probs, row, n, cells[cell], patch, cls)
		}
	}
	if words == 0 {
		return nil, 0, fmt.Errorf("pretrain: no colour words in held-out scene captions among %d examples", len(exs))
	}
	shares, err = meanShares(sum, words)
	return shares, area, err
}

// addShares adds to sum[site], for every language-model attention site of
// probs (one forward pass's attention, [heads, T, T]), the head-mean
// attention of row on the patches own (encoder rows, 1-based), on the
// other n-len(own) patches, on [CLS] and on the rest (the text), with
// patch(k) the position of patch k and cls that of [CLS].
func addShares(sum map[string][4]float64, probs map[string]nn.Tensor, row, n int, own []int, patch func(int) int, cls int) {
	for site, p := range probs {
		heads, T := p.Shape[0], p.Shape[1]
		acc := sum[site]
		for hh := range heads {
			r := p.Data[hh*T*T+row*T : hh*T*T+(row+1)*T]
			var mine, all float64
			for k := 1; k <= n; k++ {
				all += float64(r[patch(k)])
				if slices.Contains(own, k) {
					mine += float64(r[patch(k)])
				}
			}
			c := float64(r[cls])
			acc[0] += mine / float64(heads)
			acc[1] += (all - mine) / float64(heads)
			acc[2] += c / float64(heads)
			acc[3] += (1 - all - c) / float64(heads)
		}
		sum[site] = acc
	}
}

// meanShares returns the sums of addShares over words rows as means, one
// AttentionShare per block in block order.
func meanShares(sum map[string][4]float64, words int) ([]AttentionShare, error) {
	var shares []AttentionShare
	for _, site := range slices.Sorted(maps.Keys(sum)) {
		var b int
		if _, err := fmt.Sscanf(site, "lm.blocks.%d.attn.probs", &b); err != nil {
			return nil, fmt.Errorf("pretrain: unexpected attention site %q", site)
		}
		a, w := sum[site], float64(words)
		shares = append(shares, AttentionShare{Block: b, Own: a[0] / w, Other: a[1] / w, CLS: a[2] / w, Text: a[3] / w})
	}
	slices.SortFunc(shares, func(x, y AttentionShare) int { return x.Block - y.Block })
	return shares, nil
}

// CellScore is how well a base reads each cell of held-out public scenes
// when the cell is named first (CellCaptions).
type CellScore struct {
	// Scenes is the number of scenes read, Objects the number of objects
	// they hold (4·Scenes cells).
	Scenes, Objects int
	// Occupied is the share of cells where the model puts "a" above
	// "nothing" right (an object or none); Colour the share of objects
	// whose colour scores highest among the colour words, Shape whose
	// shape highest among the shape words (after the right colour).
	Occupied, Colour, Shape float64
	// Attention is where the positions that predict the colour words
	// attend, per language-model block (AttentionShare: Own is the named
	// cell's patches).
	Attention []AttentionShare
	// Area is the named cell's share of the patches (a quarter).
	Area float64
}

// cellWant is one scored word of a cell-first description: at 0 the word
// after the cell's name ("a" or "nothing"), 1 the colour, 2 the shape, 3
// the answer of a colour-at question, scored as occupancy ("nothing"
// against the best colour word), for the cell's class (−1 for an empty
// cell).
type cellWant struct{ at, class int }

// cellWords are the vocabulary ids CellCaptions scores among.
type cellWords struct {
	colour, shape, present []int
	shapes                 int // the number of shape words
}

// newCellWords looks up the colour words, the shape words and "a",
// "nothing"; it returns an error if one is not in the vocabulary.
func newCellWords() (cellWords, error) {
	voc := datasets.Vocab()
	ids := func(words ...string) ([]int, error) {
		out := make([]int, len(words))
		for i, w := range words {
			id, ok := voc.ID(w)
			if !ok {
				return nil, fmt.Errorf("pretrain: %q is not in the vocabulary", w)
			}
			out[i] = id
		}
		return out, nil
	}
	var w cellWords
	colourWords, shapeWords := datasets.SceneWords()
	w.shapes = len(shapeWords)
	var err error
	if w.colour, err = ids(colourWords...); err != nil {
		return w, err
	}
	if w.shape, err = ids(shapeWords...); err != nil {
		return w, err
	}
	w.present, err = ids("a", "nothing")
	return w, err
}

// argmaxAmong returns the index in among of the id whose logit in l is
// highest (the first on ties).
func argmaxAmong(l []float32, among []int) int {
	best := 0
	for i, id := range among {
		if l[id] > l[among[best]] {
			best = i
		}
	}
	return best
}

// score counts, over the logits lg (one row per want), the occupancy words,
// colours and shapes right, and the objects scored.
func (w cellWords) score(lg nn.Tensor, wants []cellWant) (occ, col, shp, objects int) {
	V := lg.Shape[1]
	for r, c := range wants {
		l := lg.Data[r*V : (r+1)*V]
		switch c.at {
		case 0:
			if (argmaxAmong(l, w.present) == 0) == (c.class >= 0) {
				occ++
			}
		case 1:
			objects++
			if argmaxAmong(l, w.colour) == c.class/w.shapes {
				col++
			}
		case 2:
			if argmaxAmong(l, w.shape) == c.class%w.shapes {
				shp++
			}
		case 3:
			if (l[w.present[1]] < l[w.colour[argmaxAmong(l, w.colour)]]) == (c.class >= 0) {
				occ++
			}
		}
	}
	return occ, col, shp, objects
}

// The forms in which CellProbe names each cell of a held-out scene
// before scoring what the model says it holds.
const (
	// CellOrdered is the cell-first description, the cells in their
	// fixed order (datasets.SceneCellCaption): what the cell-captions
	// stage trains on, where the order alone can tell which cell a slot
	// describes.
	CellOrdered = "ordered"
	// CellShuffled is the same description with each scene's cells in
	// a random order (datasets.SceneCellOrderCaption; cellProbeOrders:
	// the same orders for every base), so that only the cell's words
	// tell which cell a colour word describes.
	CellShuffled = "shuffled"
	// CellAlone names one cell a sequence (datasets.SceneOneCellPrompt,
	// "what is at the bottom right ?", answered "a red circle" or
	// "nothing").
	CellAlone = "single"
	// CellQuestion asks shapes-vqa's colour-at and shape-at questions
	// about every cell (datasets.SceneAtQuestion, "what colour is the
	// object at the top left ?").
	CellQuestion = "question"
)

// CellProbeForms lists the forms of CellProbe, in the order the probe
// command prints them.
var CellProbeForms = []string{CellOrdered, CellShuffled, CellAlone, CellQuestion}

// cellQuery is one sequence CellProbe runs: prompt and answer words, and
// the answer words it scores (idx: the answer word whose predicting
// position is scored, want: what is scored there, cell: the cell it is
// about).
type cellQuery struct {
	prompt, answer string
	idx, cell      []int
	wants          []cellWant
}

func (q *cellQuery) add(idx, cell int, w cellWant) {
	q.idx, q.cell, q.wants = append(q.idx, idx), append(q.cell, cell), append(q.wants, w)
}

// cellQueries returns the sequences that name every cell of the scene
// key (classes: its cells' classes, −1 empty) in form, the described
// cells in order for CellOrdered and CellShuffled.
func cellQueries(key string, classes [4]int, form string, order [4]int) ([]cellQuery, error) {
	bad := fmt.Errorf("pretrain: %q is not a scene", key)
	switch form {
	case CellOrdered, CellShuffled:
		text, ok := datasets.SceneCellOrderCaption(key, order)
		if !ok {
			return nil, bad
		}
		q := cellQuery{prompt: datasets.SceneCellPrompt, answer: text + " <eos>"}
		// Each cell's words: "at the W W" then "a COLOUR SHAPE" or
		// "nothing", then "and" (or <eos>): the word after the cell's
		// name is at answer index j, 7 words a cell with an object, 5
		// without.
		j := 0
		for _, cell := range order {
			class := classes[cell]
			j += 4 // at the W W
			q.add(j, cell, cellWant{0, class})
			if class >= 0 {
				q.add(j+1, cell, cellWant{1, class})
				q.add(j+2, cell, cellWant{2, class})
				j += 3
			} else {
				j++
			}
			j++ // and, or <eos>
		}
		return []cellQuery{q}, nil
	case CellAlone:
		var qs []cellQuery
		for cell, class := range classes {
			a, ok := datasets.SceneOneCell(key, cell)
			if !ok {
				return nil, bad
			}
			q := cellQuery{prompt: datasets.SceneOneCellPrompt(cell), answer: a + " <eos>"}
			q.add(0, cell, cellWant{0, class})
			if class >= 0 {
				q.add(1, cell, cellWant{1, class})
				q.add(2, cell, cellWant{2, class})
			}
			qs = append(qs, q)
		}
		return qs, nil
	case CellQuestion:
		var qs []cellQuery
		for cell, class := range classes {
			for _, kind := range []string{"colour-at", "shape-at"} {
				p, a, ok := datasets.SceneAtQuestion(key, kind, cell)
				if !ok {
					return nil, bad
				}
				q := cellQuery{prompt: p, answer: a}
				switch {
				case kind == "colour-at":
					q.add(0, cell, cellWant{3, class})
					if class >= 0 {
						q.add(0, cell, cellWant{1, class})
					}
				case class >= 0:
					q.add(0, cell, cellWant{2, class})
				}
				if len(q.wants) > 0 {
					qs = append(qs, q)
				}
			}
		}
		return qs, nil
	}
	return nil, fmt.Errorf("pretrain: unknown cell probe form %q (want one of %s)", form, strings.Join(CellProbeForms, ", "))
}

// cellProbeOrders returns the order in which CellShuffled describes the
// cells of the i-th scene CellProbe reads: a permutation drawn from a
// fixed stream, the same for every base and every call.
func cellProbeOrders(scenes int) [][4]int {
	rng := rand.New(rand.NewPCG(1, streamCellProbe))
	out := make([][4]int, scenes)
	for i := range out {
		for j, c := range rng.Perm(4) {
			out[i][j] = c
		}
	}
	return out
}

// CellCaptions is CellProbe in the form CellOrdered.
func CellCaptions(m *nn.TinyMLLM, exs []datasets.Example) (CellScore, error) {
	return CellProbe(m, exs, CellOrdered)
}

// CellProbe teacher-forces, through m, text that names each cell of every
// held-out public scene among exs (as Captions picks them) in form and
// scores what follows the cell's name: whether the cell holds an object,
// then for an object its colour (argmax among the colour words) and its
// shape (among the shape words). In the description forms (CellOrdered,
// the cell-first description "at the top left a red circle and at the top
// right nothing and …" after datasets.SceneCellPrompt, and CellShuffled,
// the same with each scene's cells in an order of their own) and in
// CellAlone ("what is at the bottom right ?" → "a red circle") the
// occupancy is "a" against "nothing", the colour the word after "a", the
// shape the word after the right colour; in CellQuestion (shapes-vqa's
// "what colour is the object at the top left ?" and "what shape is …")
// the occupancy is "nothing" against the best colour word, and the colour
// and the shape are the answers' argmax among the colour and the shape
// words. Each scored word depends on the named cell's patches alone; in
// every form but CellOrdered only the cell's words, not its place in the
// text, say which cell that is. It also returns where the colour words'
// predicting positions attend (addShares). It returns an error if no
// example is a held-out caption, form is unknown, a word is missing from
// the vocabulary, or the patches do not divide evenly among the four
// cells.
func CellProbe(m *nn.TinyMLLM, exs []datasets.Example, form string) (CellScore, error) {
	var s CellScore
	if !slices.Contains(CellProbeForms, form) {
		return s, fmt.Errorf("pretrain: unknown cell probe form %q (want one of %s)", form, strings.Join(CellProbeForms, ", "))
	}
	cells, err := patchCells(m.Config)
	if err != nil {
		return s, err
	}
	n := m.Config.Patches()
	s.Area = float64(len(cells[0])) / float64(n)
	voc := datasets.Vocab()
	words, err := newCellWords()
	if err != nil {
		return s, err
	}
	var held []*datasets.Example
	for i := range exs {
		if ex := &exs[i]; ex.Kind == "caption" && datasets.PretrainHeldOut(ex.Items) {
			held = append(held, ex)
		}
	}
	orders := cellProbeOrders(len(held))
	sum := map[string][4]float64{}
	var occ, col, shp int
	for i, ex := range held {
		classes, ok := datasets.SceneCells(ex.Items[0])
		if !ok || len(ex.Images) != 1 {
			return s, fmt.Errorf("pretrain: %s is not a scene with one image", ex.ID)
		}
		order := [4]int{0, 1, 2, 3}
		if form == CellShuffled {
			order = orders[i]
		}
		qs, err := cellQueries(ex.Items[0], classes, form, order)
		if err != nil {
			return s, err
		}
		for _, q := range qs {
			prompt := voc.Encode(nil, q.prompt)
			answer := voc.Encode(nil, q.answer)
			seq := nn.Sequence{Tokens: append(slices.Clone(prompt), answer...), Images: ex.Images}
			probs := map[string]nn.Tensor{}
			h := &nn.Hooks{Observe: func(site string, x nn.Tensor) {
				if strings.HasPrefix(site, "lm.") && strings.HasSuffix(site, ".attn.probs") {
					probs[site] = nn.Tensor{Shape: slices.Clone(x.Shape), Data: slices.Clone(x.Data)}
				}
			}}
			t := nn.NewTape(nil, nil)
			hid, pos, err := m.Forward(t, &seq, nil, h, nil)
			if err != nil {
				return s, fmt.Errorf("pretrain: cells of %s: %w", ex.ID, err)
			}
			img := slices.Index(seq.Tokens, datasets.Image)
			patch := func(j int) int { return pos[img] + j }
			cls := pos[img]
			if m.Config.CLSLast {
				patch = func(j int) int { return pos[img] + j - 1 }
				cls = pos[img] + n
			}
			rows := make([]int, len(q.idx))
			for k, j := range q.idx {
				rows[k] = pos[len(prompt)+j] - 1
				if q.wants[k].at == 1 {
					addShares(sum, probs, rows[k], n, cells[q.cell[k]], patch, cls)
				}
			}
			o, c, sh, objs := words.score(m.Logits(t, hid, rows).Value, q.wants)
			occ, col, shp, s.Objects = occ+o, col+c, shp+sh, s.Objects+objs
		}
		s.Scenes++
	}
	if s.Scenes == 0 || s.Objects == 0 {
		return s, fmt.Errorf("pretrain: no held-out scene captions among %d examples", len(exs))
	}
	s.Occupied = float64(occ) / float64(4*s.Scenes)
	s.Colour = float64(col) / float64(s.Objects)
	s.Shape = float64(shp) / float64(s.Objects)
	s.Attention, err = meanShares(sum, s.Objects)
	return s, err
}
