// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"math"

	"github.com/repro-dp/repro/nn"
)

// FeatureDistance returns a learned-feature distance between images x and
// y under the vision encoder v, in the form of LPIPS (Zhang et al. 2018,
// Eq. 1) without its learned channel weights: each output token of v
// (after the final LayerNorm) is scaled to unit norm, and the distance is
// the mean over tokens of the squared ℓ₂ distance of the two images'
// tokens, in [0, 4]. LPIPS itself needs AlexNet or VGG weights trained on
// ImageNet, which this project cannot download; with repro's own
// pretrained encoder (pretrain.Base, arch vit) the distance is computed
// in a feature space learned on the public split. It panics if an image
// does not fit v.
func FeatureDistance(v *nn.VisionEncoder, x, y []float32) float64 {
	fx, fy := tokens(v, x), tokens(v, y)
	var s float64
	for i := range fx.Rows() {
		a, b := unit(fx.Row(i)), unit(fy.Row(i))
		for j := range a {
			d := a[j] - b[j]
			s += float64(d * d)
		}
	}
	return s / float64(fx.Rows())
}

func tokens(v *nn.VisionEncoder, img []float32) nn.Tensor {
	if len(img) != v.Channels*v.ImageSize*v.ImageSize {
		panic("gia: image does not fit the encoder")
	}
	t := nn.NewTape(nil, nil)
	out, _ := v.Forward(t, t.Input(nn.Tensor{Shape: []int{v.Channels, v.ImageSize, v.ImageSize}, Data: img}, false), -1, nil)
	return out.Value
}

// unit returns x/‖x‖ in float64 (x itself when zero).
func unit(x []float32) []float64 {
	out := make([]float64, len(x))
	var s float64
	for i, v := range x {
		out[i] = float64(v)
		s += float64(out[i] * out[i])
	}
	if s > 0 {
		n := math.Sqrt(s)
		for i := range out {
			out[i] /= n
		}
	}
	return out
}
