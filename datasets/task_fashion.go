// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"math/rand/v2"
	"slices"
)

// ShadeThreshold separates "light" from "dark" Fashion-MNIST items: the mean
// gray level (in [0, 1]) of an image's non-zero pixels. 0.59 is the median of
// that statistic over the embedded subset, so the two answers are balanced
// overall while varying within every class.
const ShadeThreshold = 0.59

// Shade returns "light" or "dark" for a 784-byte grayscale image.
func Shade(gray []byte) string {
	sum, n := 0, 0
	for _, g := range gray {
		if g > 0 {
			sum += int(g)
			n++
		}
	}
	if n > 0 && float64(sum)/float64(n)/255 >= ShadeThreshold {
		return "light"
	}
	return "dark"
}

// fashion-vqa question kinds and their text.
var fashionQuestions = map[string]string{
	"class":  "what is the item ?",
	"coarse": "what kind of item is it ?",
	"feet":   "is the item worn on the feet ?",
	"shade":  "is the item light or dark ?",
}

// fashionAnswer returns the answer word of kind for image i of f.
func fashionAnswer(f *Fashion, i int, kind string) string {
	l := int(f.Labels[i])
	switch kind {
	case "class":
		return FashionClasses[l]
	case "coarse":
		return FashionCoarse[FashionCoarseOf[l]]
	case "feet":
		if FashionCoarse[FashionCoarseOf[l]] == "footwear" {
			return "yes"
		}
		return "no"
	case "shade":
		return Shade(f.Images[i*784 : (i+1)*784])
	}
	panic("datasets: unknown fashion question kind")
}

// buildFashionVQA builds fashion-vqa, the stand-in for Dual-Priv's
// ScienceQA/GQA-style VQA with an IMG accuracy split.
//
// Private, holdout and test: one question per image. A quarter are
// text-answerable: the prompt states the item ("the item is a sneaker .")
// before asking its class, category or whether it is worn on the feet. The
// others need the image: its class, its coarse category, whether it is
// footwear, or whether it is light or dark (Shade, which varies within each
// class, so it is a new visual skill for the base model).
//
// Public: half captions of public images ("<image> describe the item ." →
// "a photo of a sneaker"), half the class question, so the base model knows
// the class names and the question format but not the coarse, footwear,
// shade or text-only questions, which make up most of the private task.
func buildFashionVQA(d *Dataset, b *buildCtx) error {
	const task = "fashion-vqa"
	b.sizes = imageSizes[d.Scale]
	f, err := b.fashionPool(task)
	if err != nil {
		return err
	}
	d.Source, d.PoolImages, d.Generative = f.Source, f.Len(), true
	pub, priv := fashionRoles(f, b.rng(task, "split"))
	rng := b.rng(task, "questions")
	err = b.buildPoolSplits(d, task, f, pub, priv, func(split string, i, idx int) Example {
		ex := newExample(exampleID(task, split, i))
		ex.Items = []string{fashionItem(f, idx)}
		ex.Images = [][]float32{b.image(f, idx)}
		name := FashionClasses[f.Labels[idx]]
		if split == "public" {
			if rng.IntN(2) == 0 {
				ex.Kind = "caption"
				ex.Prompt = b.vocab.Encode(nil, "<bos> <image> describe the item .")
				ex.Answer = b.vocab.Encode(nil, "a photo of a "+name+" <eos>")
			} else {
				ex.Kind = "class"
				ex.Prompt = b.vocab.Encode(nil, "<bos> <image> "+fashionQuestions["class"])
				ex.Answer = b.vocab.Encode(nil, name+" <eos>")
			}
			return ex
		}
		b.fashionQuestion(&ex, f, idx, rng)
		return ex
	})
	if err != nil {
		return err
	}
	b.addCanaries(d, b.imageSecretCanary)
	return nil
}

// fashionQuestion poses the private task's question about pool image idx
// of f in ex (Kind, TextOnly, Prompt, Answer), drawing from rng: a quarter
// text-answerable (the prompt states the item), the others about the image
// (class, coarse category, footwear or shade).
func (b *buildCtx) fashionQuestion(ex *Example, f *Fashion, idx int, rng *rand.Rand) {
	prompt := "<bos> <image> "
	if rng.Float64() < 0.25 {
		ex.TextOnly = true
		ex.Kind = pick(rng, []string{"class", "coarse", "feet"})
		prompt += "the item is a " + FashionClasses[f.Labels[idx]] + " . "
	} else {
		ex.Kind = pick(rng, []string{"class", "class", "coarse", "feet", "shade", "shade"})
	}
	ex.Prompt = b.vocab.Encode(nil, prompt+fashionQuestions[ex.Kind])
	ex.Answer = b.vocab.Encode(nil, fashionAnswer(f, idx, ex.Kind)+" <eos>")
}

// buildFashionCls builds fashion-cls, SPARTA's public-pretrain → private
// fine-tune protocol at small scale: the public split has the four coarse
// labels (FashionCoarse), private, holdout and test the ten fine labels.
// Examples carry an image and a Label, no tokens. Canaries are noise images
// with random fine labels.
func buildFashionCls(d *Dataset, b *buildCtx) error {
	const task = "fashion-cls"
	b.sizes = imageSizes[d.Scale]
	f, err := b.fashionPool(task)
	if err != nil {
		return err
	}
	d.Source, d.PoolImages = f.Source, f.Len()
	d.Classes, d.PublicClasses = FashionClasses, FashionCoarse
	pub, priv := fashionRoles(f, b.rng(task, "split"))
	err = b.buildPoolSplits(d, task, f, pub, priv, func(split string, i, idx int) Example {
		return b.fashionImage(f, task, split, i, idx, int(f.Labels[idx]))
	})
	if err != nil {
		return err
	}
	b.addCanaries(d, func(rng *rand.Rand) (Example, []int) { return labelCanary(rng, len(FashionClasses)), nil })
	return nil
}

// FashionUpper are the fine labels of fashion-upper, in its label order:
// the four upper-body garments (T-shirt, pullover, coat, shirt), which
// the public coarse labels merge into one category ("upper").
var FashionUpper = []int{0, 2, 4, 6}

// fashionUpperIndex returns the position in FashionUpper of fine label l,
// or -1 when l is not an upper-body garment.
func fashionUpperIndex(l uint8) int { return slices.Index(FashionUpper, int(l)) }

// upperSizes are the split sizes of fashion-upper: the public split is
// fashion-cls's; private, holdout and test hold private-side images of
// the four upper-body garments only, about 40% of the private side (1947
// images in the embedded subset, which bounds small).
var upperSizes = map[Scale]Sizes{
	Smoke: {512, 512, 256, 256, 1},
	Small: {2000, 1000, 400, 400, 4},
	Full:  {20000, 8000, 4000, 4000, 16},
}

// fashionImage is example i of a split of an image-classification task on
// pool image idx: the image and its item, with the coarse label on the public
// split and label (the task's fine label) elsewhere.
func (b *buildCtx) fashionImage(f *Fashion, task, split string, i, idx, label int) Example {
	ex := newExample(exampleID(task, split, i))
	ex.Items = []string{fashionItem(f, idx)}
	ex.Images = [][]float32{b.image(f, idx)}
	ex.Label = label
	if split == "public" {
		ex.Label = FashionCoarseOf[f.Labels[idx]]
	}
	ex.Kind = "image"
	return ex
}

// buildFashionUpper builds fashion-upper, the second fine-tuning task of
// SPARTA's transfer setting: the fine label among the four upper-body
// garments (FashionUpper; label i is FashionUpper[i]), after public
// pretraining on the coarse labels that put all four in one category. Its
// public split is fashion-cls's (the same images, order and coarse
// labels: the base models are pretrained on that split), so the public
// features cannot separate its classes, unlike fashion-cls's, whose ten
// fine labels the coarse categories already split in part. The private
// side is fashion-cls's random order with the other garments left out.
// Canaries are noise images with random labels among the four.
func buildFashionUpper(d *Dataset, b *buildCtx) error {
	const base = "fashion-cls"
	b.sizes = upperSizes[d.Scale]
	f, err := b.fashionPool(d.Task)
	if err != nil {
		return err
	}
	d.Source, d.PoolImages = f.Source, f.Len()
	d.Classes, d.PublicClasses = make([]string, len(FashionUpper)), FashionCoarse
	for i, l := range FashionUpper {
		d.Classes[i] = FashionClasses[l]
	}
	pub, all := fashionRoles(f, b.rng(base, "split"))
	var priv []int
	for _, idx := range all {
		if fashionUpperIndex(f.Labels[idx]) >= 0 {
			priv = append(priv, idx)
		}
	}
	err = b.buildPoolSplits(d, d.Task, f, pub, priv, func(split string, i, idx int) Example {
		return b.fashionImage(f, d.Task, split, i, idx, fashionUpperIndex(f.Labels[idx]))
	})
	if err != nil {
		return err
	}
	b.addCanaries(d, func(rng *rand.Rand) (Example, []int) { return labelCanary(rng, len(FashionUpper)), nil })
	return nil
}

// pick returns a uniformly chosen element of s.
func pick[T any](rng *rand.Rand, s []T) T { return s[rng.IntN(len(s))] }
