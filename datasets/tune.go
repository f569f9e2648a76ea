// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
)

// PretrainHeldOutEvery is the share 1/PretrainHeldOutEvery of public items
// that pretraining holds out of its training mixture (PretrainHeldOut).
const PretrainHeldOutEvery = 8

// PretrainHeldOut reports whether an example whose source items are items
// is held out of pretraining: package pretrain trains the base models on no
// public example with such an item (it measures them instead), and the
// -tune tasks validate on such items only. The assignment hashes the item
// names (FNV-1a), so an item is held out in every task that uses it, at
// every seed and scale.
func PretrainHeldOut(items []string) bool {
	for _, it := range items {
		h := fnv.New64a()
		h.Write([]byte(it))
		if h.Sum64()%PretrainHeldOutEvery == 0 {
			return true
		}
	}
	return false
}

// TuneSuffix ends the name of the tuning variant of a task.
const TuneSuffix = "-tune"

// tuneSizes are the split sizes of the -tune variants: Train regular
// examples in private train (as many as the base task's, so an epoch takes
// as many steps), Holdout non-members and Validation examples in the test
// split. At smoke and small the embedded Fashion-MNIST subset has 3233
// public images, 404 of them held out of pretraining.
var tuneSizes = map[Scale]tuneSize{
	Smoke: {256, 256, 256},
	Small: {2000, 500, 400},
	Full:  {20000, 4000, 3000},
}

// tuneSize are the split sizes of a -tune variant.
type tuneSize struct{ Train, Holdout, Validation int }

// upperTuneSizes are fashion-upper-tune's: the embedded subset has 1253
// public images of upper-body garments, 149 of them held out of
// pretraining, which bound smoke and small; Train is fashion-upper's
// private size at small, so an epoch takes as many steps.
var upperTuneSizes = map[Scale]tuneSize{
	Smoke: {512, 128, 128},
	Small: {1000, 100, 140},
	Full:  {8000, 1500, 1200},
}

// tuneSizeOf returns the split sizes of the -tune task at scale.
func tuneSizeOf(task string, scale Scale) tuneSize {
	if task == "fashion-upper"+TuneSuffix {
		return upperTuneSizes[scale]
	}
	return tuneSizes[scale]
}

// The tuning variants: fashion-vqa-tune and shapes-vqa-tune pose the
// private task's questions about public items only, and fashion-cls-tune
// and fashion-upper-tune ask for the fine labels of public images, so hyperparameters are chosen
// on public data (no privacy cost, and the test split is never looked at).
func init() {
	tasks["fashion-vqa"+TuneSuffix] = tuneBuilder("fashion-vqa", tuneFashion)
	tasks["shapes-vqa"+TuneSuffix] = tuneBuilder("shapes-vqa", tuneShapes)
	tasks["fashion-cls"+TuneSuffix] = tuneBuilder("fashion-cls", tuneFashionCls)
	taskArch["fashion-cls"+TuneSuffix] = taskArch["fashion-cls"]
	tasks["fashion-upper"+TuneSuffix] = tuneBuilder("fashion-upper", tuneFashionUpper)
	taskArch["fashion-upper"+TuneSuffix] = taskArch["fashion-upper"]
	for _, base := range []string{"fashion-vqa", "shapes-vqa"} {
		tune := base + TuneSuffix
		taskArch[tune] = taskArch[base]
		// The LiRA regime posed on public items (shapes-vqa-tune-lira):
		// for choosing the recipe of the membership experiments, which
		// train a small member set for many epochs, on public data.
		tasks[tune+"-lira"] = liraBuilder(tune, tasks[tune])
		taskArch[tune+"-lira"] = taskArch[base]
	}
}

// tunePoser fills the private-side splits of a -tune variant of a task
// built in d: it appends to d.Private, d.Holdout and d.Test the examples
// sz asks for, every one about a public item, the test split's about
// items held out of pretraining (PretrainHeldOut) and the others' about
// items not held out.
type tunePoser func(d *Dataset, b *buildCtx, task string) error

// tuneBuilder returns the builder of the -tune variant of the task base:
//
//  1. the base task is built at the same scale and seed (its random
//     streams are named after base); its public split is kept as it is,
//     its private, holdout and test splits and its canaries are dropped;
//  2. pose builds private train (Train examples), holdout and a validation
//     split in place of test, posing the private task's questions (all
//     kinds, in the base's proportions) about public items: public
//     Fashion-MNIST images or public scene layouts, never a private-side
//     item, so the variant shares no item with any task's private, holdout
//     or test split;
//  3. the validation items are held out of pretraining (PretrainHeldOut),
//     so, like the test items, the base model never trained on them; the
//     train and holdout items may have been pretraining examples (with the
//     public captions and class questions, not the private questions).
//
// The -tune tasks are for choosing hyperparameters (experiments
// tune-baselines): their test split is the validation split, and a run's
// acc on them is validation accuracy.
func tuneBuilder(base string, pose tunePoser) builder {
	return func(d *Dataset, b *buildCtx) error {
		task := d.Task
		d.Task = base
		err := tasks[base](d, b)
		d.Task = task
		if err != nil {
			return err
		}
		for i := range d.Public {
			d.Public[i].ID = task + strings.TrimPrefix(d.Public[i].ID, base)
		}
		d.Private, d.Holdout, d.Test, d.Canaries = nil, nil, nil, nil
		return pose(d, b, task)
	}
}

// tuneSplit returns the -tune split that an example about an item with
// held-out status heldOut goes to, given the numbers of examples built so
// far, or "" when its split is full.
func tuneSplit(d *Dataset, heldOut bool) string {
	sz := tuneSizeOf(d.Task, d.Scale)
	switch {
	case heldOut && len(d.Test) < sz.Validation:
		return "test"
	case heldOut:
		return ""
	case len(d.Private) < sz.Train:
		return "private"
	case len(d.Holdout) < sz.Holdout:
		return "holdout"
	}
	return ""
}

// tuneFull reports whether every -tune split of d is full.
func tuneFull(d *Dataset) bool {
	sz := tuneSizeOf(d.Task, d.Scale)
	return len(d.Test) == sz.Validation && len(d.Private) == sz.Train && len(d.Holdout) == sz.Holdout
}

// tuneAdd adds an example about item, posed by pose (its image, question
// and answer), to the split tuneSplit gives the item, and reports whether
// every split is then full. An item no split takes is skipped, and pose is
// not called for it.
func tuneAdd(d *Dataset, task, item string, pose func(ex *Example)) bool {
	split := tuneSplit(d, PretrainHeldOut([]string{item}))
	if split == "" {
		return false
	}
	dst := d.splitRef(split)
	ex := newExample(exampleID(task, split, len(*dst)))
	ex.Items = []string{item}
	pose(&ex)
	*dst = append(*dst, ex)
	return tuneFull(d)
}

// tuneFashion poses fashion-vqa's private questions about the public
// Fashion-MNIST images of the pool, taken in a random order.
func tuneFashion(d *Dataset, b *buildCtx, task string) error {
	rng := b.rng(task, "questions")
	return tuneFashionImages(d, b, task, func(ex *Example, f *Fashion, idx int) {
		b.fashionQuestion(ex, f, idx, rng)
	})
}

// tuneFashionCls poses fashion-cls's private task, the fine label, about
// the public Fashion-MNIST images of the pool (whose public split labels
// them with the coarse category only), taken in a random order. The base
// model trained on the coarse labels of the train and holdout items, never
// on the validation items, and on no fine label.
func tuneFashionCls(d *Dataset, b *buildCtx, task string) error {
	return tuneFashionImages(d, b, task, func(ex *Example, f *Fashion, idx int) {
		ex.Label = int(f.Labels[idx])
		ex.Kind = "image"
	})
}

// tuneFashionUpper poses fashion-upper's private task, the fine label
// among the four upper-body garments, about the public Fashion-MNIST
// images of those garments (the base trained on them with the one coarse
// label "upper"), taken in a random order.
func tuneFashionUpper(d *Dataset, b *buildCtx, task string) error {
	return tuneFashionImagesOf(d, b, task, func(l uint8) bool { return fashionUpperIndex(l) >= 0 }, func(ex *Example, f *Fashion, idx int) {
		ex.Label = fashionUpperIndex(f.Labels[idx])
		ex.Kind = "image"
	})
}

// tuneFashionImages fills the -tune splits of d with the public
// Fashion-MNIST images of the pool, in the base task's random public
// order, each example's image set and the rest posed by pose.
func tuneFashionImages(d *Dataset, b *buildCtx, task string, pose func(ex *Example, f *Fashion, idx int)) error {
	return tuneFashionImagesOf(d, b, task, func(uint8) bool { return true }, pose)
}

// tuneFashionImagesOf is tuneFashionImages over the public images whose
// fine label keep accepts.
func tuneFashionImagesOf(d *Dataset, b *buildCtx, task string, keep func(label uint8) bool, pose func(ex *Example, f *Fashion, idx int)) error {
	f, err := b.fashionPool(task)
	if err != nil {
		return err
	}
	pub, _ := fashionRoles(f, b.rng(task, "split"))
	for _, idx := range pub {
		if !keep(f.Labels[idx]) {
			continue
		}
		if tuneAdd(d, task, fashionItem(f, idx), func(ex *Example) {
			ex.Images = [][]float32{b.image(f, idx)}
			pose(ex, f, idx)
		}) {
			return nil
		}
	}
	sz := tuneSizeOf(task, d.Scale)
	return fmt.Errorf("datasets: %s at scale %s needs %d public Fashion-MNIST images held out of pretraining and %d others, the %s pool has too few (%d validation, %d train, %d holdout built)%s",
		task, d.Scale, sz.Validation, sz.Train+sz.Holdout, f.Source, len(d.Test), len(d.Private), len(d.Holdout), fullHint(f))
}

// fullHint tells how to get a pool large enough when f is the embedded
// sample of Fashion-MNIST.
func fullHint(f *Fashion) string {
	if f.Source == "embedded" {
		return ": pass a data directory with the full release (Debian package dataset-fashion-mnist)"
	}
	return ""
}

// tuneShapes poses shapes-vqa's private questions (every kind) about
// generated scenes with public layouts (isPublicKey), each layout once.
func tuneShapes(d *Dataset, b *buildCtx, task string) error {
	d.Source = "generated"
	scenes := b.rng(task, "scenes")
	qs := b.rng(task, "questions")
	seen := make(map[string]bool)
	if b.opt.ShapesBalanced {
		return tuneShapesBalanced(d, b, task, scenes, qs, seen)
	}
	// 19⁴ − 1 layouts, about 40% public: the draws never run out, but a
	// bound keeps a mistake from looping forever.
	for range 1 << 24 {
		s := NewScene(scenes)
		k := s.key()
		if seen[k] || !isPublicKey(k) {
			continue
		}
		seen[k] = true
		if tuneAdd(d, task, k, func(ex *Example) {
			ex.Images = [][]float32{s.Render()}
			kind, q, a := s.question(qs, shapeKindsAll)
			ex.Kind = kind
			ex.Prompt = b.vocab.Encode(nil, "<bos> <image> "+q)
			ex.Answer = b.vocab.Encode(nil, a+" <eos>")
		}) {
			return nil
		}
	}
	return fmt.Errorf("datasets: %s: ran out of public scene layouts", task)
}

// tuneShapesBalanced is tuneShapes for balanced answers
// (Options.ShapesBalanced): each example's kind and answer are drawn
// first (balancedTarget), then public layouts until one of a split that
// is not full yet answers the kind's question with that answer.
func tuneShapesBalanced(d *Dataset, b *buildCtx, task string, scenes, qs *rand.Rand, seen map[string]bool) error {
	kind, target := balancedTarget(qs)
	for range 1 << 26 {
		s := NewScene(scenes)
		k := s.key()
		if seen[k] || !isPublicKey(k) || tuneSplit(d, PretrainHeldOut([]string{k})) == "" {
			continue
		}
		_, q, a := s.question(qs, []string{kind})
		if a != target {
			continue
		}
		seen[k] = true
		if tuneAdd(d, task, k, func(ex *Example) {
			ex.Images = [][]float32{s.Render()}
			ex.Kind = kind
			ex.Prompt = b.vocab.Encode(nil, "<bos> <image> "+q)
			ex.Answer = b.vocab.Encode(nil, a+" <eos>")
		}) {
			return nil
		}
		kind, target = balancedTarget(qs)
	}
	return fmt.Errorf("datasets: %s: ran out of public scene layouts", task)
}
