// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// buildICL builds icl, in-context episodes of N demonstrations and a query,
// each a Fashion-MNIST image (DP-MTV at small scale). An episode's prompt is
//
//	<bos> <image> w₁ ; … <image> w_N ; <image>
//
// with the answer "w <eos>": each label word follows its image directly (a
// TinyMLLM reads an image's [CLS] token last, so the word follows the
// image's summary; see package pretrain), and its images are the N
// demonstrations then the query (N is Options.Shots: by default 4 at smoke
// scale, 8 otherwise).
// An episode has K classes (Options.Ways: by default 3 at smoke scale, 5
// otherwise), each shown at least once among the demonstrations; the other
// demonstrations' classes and the query class are uniform among them
// (exactly balanced over the private-side episodes).
//
// Public episodes (pretraining) draw their classes and their label words
// (LabelWords) afresh for each episode, so a word says nothing about an
// image outside its episode: zero-shot accuracy is at chance by
// construction and only the demonstrations tell the mapping. Public images
// recur across public episodes.
//
// Private, holdout and test episodes share one fixed task drawn from the
// seed: Classes are its fashion classes, Mapping their label words, and
// Label the query's class index. They are DP-MTV's chunks; no image appears
// in two of them. Canaries are episodes of noise images whose every
// demonstration and query means a six-digit secret code.
func buildICL(d *Dataset, b *buildCtx) error {
	const task = "icl"
	b.sizes = episodeSizes[d.Scale]
	shots, ways := episodeShots[d.Scale], episodeWays[d.Scale]
	if b.opt.Shots > 0 {
		shots = b.opt.Shots
	}
	if b.opt.Ways > 0 {
		ways = b.opt.Ways
	}
	if shots < ways {
		return fmt.Errorf("datasets: icl needs at least %d shots for %d ways (one per class), got %d", ways, ways, shots)
	}
	f, err := b.fashionPool(task)
	if err != nil {
		return err
	}
	d.Source, d.PoolImages, d.Generative, d.Shots = f.Source, f.Len(), true, shots
	pub, priv := fashionRoles(f, b.rng(task, "split"))
	pubBy, privBy := byClass(f, pub), byClass(f, priv)
	e := &episodes{b: b, f: f, shots: shots, ways: ways, words: lists().labels}
	classes := e.fixedTask(d, b.rng(task, "mapping"))
	for c, idx := range pubBy {
		if len(idx) < shots+1 {
			return fmt.Errorf("datasets: icl with %d shots needs %d public images of class %s, the %s pool has %d", shots, shots+1, FashionClasses[c], f.Source, len(idx))
		}
	}
	e.rng = b.rng(task, "episodes")
	b.buildSplits(d, []string{"public"}, func(split string, i int) Example {
		return e.public(exampleID(task, split, i), pubBy)
	})
	if err := e.privateSide(d, task, privBy, classes); err != nil {
		return err
	}
	b.addCanaries(d, e.canary)
	e.rng = b.rng(task, "selection")
	return e.selection(d, task, pubBy, classes)
}

// selection fills d.Selection: selectionSizes[d.Scale] zero-shot queries
// of public images held out of pretraining, as many of each of the
// task's classes as their images allow, in a random order.
func (e *episodes) selection(d *Dataset, task string, pubBy [][]int, classes []int) error {
	per := selectionSizes[d.Scale] / len(classes)
	for k, c := range classes {
		var held []int
		for _, idx := range pubBy[c] {
			if PretrainHeldOut([]string{fashionItem(e.f, idx)}) {
				held = append(held, idx)
			}
		}
		if len(held) == 0 {
			return fmt.Errorf("datasets: icl: no public image of class %s is held out of pretraining", FashionClasses[c])
		}
		e.rng.Shuffle(len(held), func(i, j int) { held[i], held[j] = held[j], held[i] })
		for _, idx := range held[:min(per, len(held))] {
			ex := newExample("")
			ex.Kind, ex.Label = "query", k
			ex.Prompt = []int{BOS, Image}
			ex.Images = [][]float32{e.b.image(e.f, idx)}
			ex.Items = []string{fashionItem(e.f, idx)}
			ex.Answer = e.b.vocab.Encode(nil, d.Mapping[k]+" <eos>")
			d.Selection = append(d.Selection, ex)
		}
	}
	e.rng.Shuffle(len(d.Selection), func(i, j int) { d.Selection[i], d.Selection[j] = d.Selection[j], d.Selection[i] })
	for i := range d.Selection {
		d.Selection[i].ID = exampleID(task, "selection", i)
	}
	return nil
}

// episodes builds the episodes of one icl dataset.
type episodes struct {
	b           *buildCtx
	f           *Fashion
	rng         *rand.Rand // the "episodes" stream: classes, words, order
	shots, ways int
	words       []string // LabelWords
}

// fixedTask draws the private task from rng, sets d.Classes and d.Mapping,
// and returns the task's fashion classes, sorted.
func (e *episodes) fixedTask(d *Dataset, rng *rand.Rand) []int {
	classes := rng.Perm(len(FashionClasses))[:e.ways]
	slices.Sort(classes)
	wordIdx := rng.Perm(len(e.words))[:e.ways]
	for k, c := range classes {
		d.Classes = append(d.Classes, FashionClasses[c])
		d.Mapping = append(d.Mapping, e.words[wordIdx[k]])
	}
	return classes
}

// episode builds one episode over the given classes (fashion labels) and
// their words: each class once, then the extra demonstrations' class
// positions, in a random order, then the query's class position q. take
// returns an unused image index of a class.
func (e *episodes) episode(id string, cls []int, lw []string, extra []int, q int, take func(c int) int) Example {
	b, f := e.b, e.f
	ex := newExample(id)
	ex.Kind = "episode"
	demo := make([]int, 0, e.shots)
	for k := range cls {
		demo = append(demo, k)
	}
	demo = append(demo, extra...)
	e.rng.Shuffle(len(demo), func(i, j int) { demo[i], demo[j] = demo[j], demo[i] })
	var p strings.Builder
	p.WriteString("<bos>")
	for _, k := range demo {
		idx := take(cls[k])
		ex.Images = append(ex.Images, b.image(f, idx))
		ex.Items = append(ex.Items, fashionItem(f, idx))
		p.WriteString(" <image> " + lw[k] + " ;")
	}
	idx := take(cls[q])
	ex.Images = append(ex.Images, b.image(f, idx))
	ex.Items = append(ex.Items, fashionItem(f, idx))
	p.WriteString(" <image>")
	ex.Prompt = b.vocab.Encode(nil, p.String())
	ex.Answer = b.vocab.Encode(nil, lw[q]+" <eos>")
	ex.Label = q
	return ex
}

// public builds a public episode: its classes and label words are drawn
// afresh, and its images from pubBy without repeats within the episode.
func (e *episodes) public(id string, pubBy [][]int) Example {
	rng, ways := e.rng, e.ways
	cls := rng.Perm(len(FashionClasses))[:ways]
	lw := make([]string, ways)
	for k, w := range rng.Perm(len(e.words))[:ways] {
		lw[k] = e.words[w]
	}
	extra := make([]int, e.shots-ways)
	for j := range extra {
		extra[j] = rng.IntN(ways)
	}
	used := make(map[int]bool)
	take := func(c int) int {
		for {
			idx := pick(rng, pubBy[c])
			if !used[idx] {
				used[idx] = true
				return idx
			}
		}
	}
	ex := e.episode(id, cls, lw, extra, rng.IntN(ways), take)
	ex.Label = -1 // classes differ per episode
	return ex
}

// privateSide builds the private, holdout and test episodes of the fixed
// task (classes, d.Mapping) from privBy.
//
// They use balanced designs, so every class is the query equally often and
// no class runs out of images by chance: the query classes and the extra
// demonstrations' classes are each a shuffled sequence with every class
// equally often (±1). Images are consumed without replacement across the
// three splits.
func (e *episodes) privateSide(d *Dataset, task string, privBy [][]int, classes []int) error {
	sz, ways, extraN := e.b.sizes, e.ways, e.shots-e.ways
	n := sz.Private + sz.Holdout + sz.Test
	balanced := func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i % ways
		}
		e.rng.Shuffle(n, func(i, j int) { s[i], s[j] = s[j], s[i] })
		return s
	}
	queries, extras := balanced(n), balanced(n*extraN)
	need := make([]int, ways)
	for k := range need {
		need[k] = n
	}
	for _, k := range append(slices.Clone(queries), extras...) {
		need[k]++
	}
	for k, c := range classes {
		if err := needImages(task, d.Scale, e.f, "private-side "+FashionClasses[c], len(privBy[c]), need[k]); err != nil {
			return fmt.Errorf("%w; or ask for fewer shots", err)
		}
	}
	next := make(map[int]int)
	take := func(c int) int {
		idx := privBy[c][next[c]]
		next[c]++
		return idx
	}
	j := 0
	e.b.buildSplits(d, privateSide, func(split string, i int) Example {
		extra := extras[j*extraN : (j+1)*extraN]
		ex := e.episode(exampleID(task, split, i), classes, d.Mapping, extra, queries[j], take)
		j++
		return ex
	})
	return nil
}

// canary draws a canary episode: noise images whose every demonstration and
// query means a six-digit secret code.
func (e *episodes) canary(rng *rand.Rand) (Example, []int) {
	b := e.b
	ex := newExample("")
	s := secret(rng)
	var p strings.Builder
	p.WriteString("<bos>")
	for range e.shots {
		ex.Images = append(ex.Images, noiseImage(rng))
		p.WriteString(" <image> " + s + " ;")
	}
	ex.Images = append(ex.Images, noiseImage(rng))
	p.WriteString(" <image>")
	ex.Items = []string{"canary:" + s}
	ex.Prompt = b.vocab.Encode(nil, p.String())
	ex.Answer = b.vocab.Encode(nil, s+" <eos>")
	return ex, b.vocab.Encode(nil, s)
}

// byClass groups pool indices by fine label, keeping their order.
func byClass(f *Fashion, idx []int) [][]int {
	out := make([][]int, len(FashionClasses))
	for _, i := range idx {
		out[f.Labels[i]] = append(out[f.Labels[i]], i)
	}
	return out
}
