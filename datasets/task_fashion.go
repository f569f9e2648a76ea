// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"math/rand/v2"
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
		ex := newExample(exampleID(task, split, i))
		ex.Items = []string{fashionItem(f, idx)}
		ex.Images = [][]float32{b.image(f, idx)}
		ex.Label = int(f.Labels[idx])
		if split == "public" {
			ex.Label = FashionCoarseOf[f.Labels[idx]]
		}
		ex.Kind = "image"
		return ex
	})
	if err != nil {
		return err
	}
	b.addCanaries(d, func(rng *rand.Rand) (Example, []int) { return labelCanary(rng, len(FashionClasses)), nil })
	return nil
}

// pick returns a uniformly chosen element of s.
func pick[T any](rng *rand.Rand, s []T) T { return s[rng.IntN(len(s))] }
