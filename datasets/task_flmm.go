// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"math/rand/v2"
)

// coarseCaption names each coarse category in a caption.
var coarseCaption = []string{"an upper garment", "a long garment", "some footwear", "an accessory"}

// caption draws an fl-mm caption for fine label l: informative ("a photo of
// a sneaker", 40%), coarse ("a photo of some footwear", 30%) or
// uninformative ("a photo of an item", 30%), so neither modality alone is
// always enough and fusion matters (Sec-MMFL gap G12).
func caption(rng *rand.Rand, l int) (kind, text string) {
	switch r := rng.Float64(); {
	case r < 0.4:
		return "fine", "a photo of a " + FashionClasses[l]
	case r < 0.7:
		return "coarse", "a photo of " + coarseCaption[FashionCoarseOf[l]]
	}
	return "none", "a photo of an item"
}

// buildFLMM builds fl-mm, Sec-MMFL's multimodal federated classification:
// a Fashion-MNIST image plus a caption (Example.Prompt, "<bos>" and the
// caption, no <image> placeholder) with the image's fine label. Captions
// name the class, only its coarse category, or nothing (Kind "fine",
// "coarse", "none"; TextOnly for "fine"). Private train is split over
// Clients clients by Dirichlet(Alpha) label skew (DirichletPartition); the
// other splits have Client -1. Canaries are noise images with random labels
// and the uninformative caption, all copies on one random client.
func buildFLMM(d *Dataset, b *buildCtx) error {
	const task = "fl-mm"
	b.sizes = imageSizes[d.Scale]
	f, err := b.fashionPool(task)
	if err != nil {
		return err
	}
	d.Source, d.PoolImages, d.Classes, d.PublicClasses = f.Source, f.Len(), FashionClasses, FashionClasses
	d.Clients, d.Alpha = scaleClients[d.Scale], b.opt.Alpha
	if b.opt.Clients > 0 {
		d.Clients = b.opt.Clients
	}
	sz := b.sizes
	if d.Clients > sz.Private {
		return fmt.Errorf("datasets: fl-mm at scale %s has %d private examples, too few for %d clients", d.Scale, sz.Private, d.Clients)
	}
	pub, priv := fashionRoles(f, b.rng(task, "split"))
	rng := b.rng(task, "captions")
	err = b.buildPoolSplits(d, task, f, pub, priv, func(split string, i, idx int) Example {
		ex := newExample(exampleID(task, split, i))
		ex.Items = []string{fashionItem(f, idx)}
		ex.Images = [][]float32{b.image(f, idx)}
		ex.Label = int(f.Labels[idx])
		kind, text := caption(rng, ex.Label)
		ex.Kind, ex.TextOnly = kind, kind == "fine"
		ex.Prompt = b.vocab.Encode(nil, "<bos> "+text)
		return ex
	})
	if err != nil {
		return err
	}
	labels := make([]int, len(d.Private))
	for i, ex := range d.Private {
		labels[i] = ex.Label
	}
	for i, c := range DirichletPartition(b.rng(task, "clients"), labels, d.Clients, d.Alpha) {
		d.Private[i].Client = c
	}
	b.addCanaries(d, func(rng *rand.Rand) (Example, []int) {
		ex := labelCanary(rng, len(FashionClasses))
		ex.Prompt = b.vocab.Encode(nil, "<bos> a photo of an item")
		ex.Client = rng.IntN(d.Clients)
		return ex, nil
	})
	return nil
}
