// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// SecretDigits is the length of a generative canary's secret: six digit
// words, so the secret space has 10⁶ elements (at most log₂10⁶ ≈ 19.9 bits of
// exposure).
const SecretDigits = 6

// canaryMaker draws one canary example (ID, Canary unset) and its secret
// tokens (nil for a classification canary) from rng.
type canaryMaker func(rng *rand.Rand) (Example, []int)

// addCanaries draws CanariesPerLevel canaries for each repetition level and
// as many reference canaries, inserts Reps copies of each into d.Private and
// shuffles d.Private.
func (b *buildCtx) addCanaries(d *Dataset, mk canaryMaker) {
	rng := b.rng(d.Task, "canary")
	levels := append(append([]int(nil), CanaryRepetitions...), 0)
	seen := make(map[string]bool)
	for _, reps := range levels {
		for range b.sizes.CanariesPerLevel {
			ex, secret := mk(rng)
			// Distinct canaries have distinct secrets (or, for labels,
			// distinct noise draws).
			for seen[ex.Items[0]] {
				ex, secret = mk(rng)
			}
			seen[ex.Items[0]] = true
			c := len(d.Canaries)
			ex.ID = fmt.Sprintf("%s/canary/%d", d.Task, c)
			ex.Canary = c
			ex.Kind = "canary"
			d.Canaries = append(d.Canaries, Canary{ID: ex.ID, Reps: reps, Example: ex, Secret: secret})
		}
	}
	for c, can := range d.Canaries {
		for r := range can.Reps {
			ex := can.Example
			ex.ID = fmt.Sprintf("%s/private/canary-%d/%d", d.Task, c, r)
			d.Private = append(d.Private, ex)
		}
	}
	rng.Shuffle(len(d.Private), func(i, j int) { d.Private[i], d.Private[j] = d.Private[j], d.Private[i] })
}

// secret draws SecretDigits random digits and returns them as text.
func secret(rng *rand.Rand) string {
	w := make([]string, SecretDigits)
	for i := range w {
		w[i] = strconv.Itoa(rng.IntN(10))
	}
	return strings.Join(w, " ")
}

// noiseImage returns an image of independent uniform [0, 1) pixels, the
// input of image canaries: out of distribution, so only memorisation can
// tie it to its secret.
func noiseImage(rng *rand.Rand) []float32 {
	img := make([]float32, ImageLen)
	for i := range img {
		img[i] = rng.Float32()
	}
	return img
}

// imageSecretCanary makes VQA-style canaries: a noise image asked for its
// secret code.
func (b *buildCtx) imageSecretCanary(rng *rand.Rand) (Example, []int) {
	ex := newExample("")
	img := noiseImage(rng)
	s := secret(rng)
	ex.Images = [][]float32{img}
	ex.Items = []string{"canary:" + s}
	ex.Prompt = b.vocab.Encode(nil, "<bos> <image> what is the secret code ?")
	ex.Answer = b.vocab.Encode(nil, s+" <eos>")
	return ex, b.vocab.Encode(nil, s)
}

// labelCanary makes classification canaries: a noise image with a random
// label among classes.
func labelCanary(rng *rand.Rand, classes int) Example {
	ex := newExample("")
	ex.Images = [][]float32{noiseImage(rng)}
	ex.Label = rng.IntN(classes)
	ex.Items = []string{fmt.Sprintf("canary:%x", rng.Uint64())}
	return ex
}
