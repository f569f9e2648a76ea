// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"image"
	"image/color"
	"math"
	"testing"
)

func TestFromImage(t *testing.T) {
	t.Parallel()
	// 28×28: every pixel is reproduced exactly (one sample at each centre).
	src := image.NewNRGBA(image.Rect(0, 0, 28, 28))
	for y := range 28 {
		for x := range 28 {
			src.Set(x, y, color.NRGBA{uint8(9 * x), uint8(9 * y), 77, 255})
		}
	}
	got := FromImage(src)
	for y := range 28 {
		for x := range 28 {
			want := [3]float32{float32(9*x) / 255, float32(9*y) / 255, 77.0 / 255}
			for c := range 3 {
				if g := got[c*784+y*28+x]; math.Abs(float64(g-want[c])) > 1e-6 {
					t.Fatalf("pixel (%d, %d) channel %d: got %v, want %v", x, y, c, g, want[c])
				}
			}
		}
	}
	// 56×56 with 2×2 blocks of 0 and 1 alternating by column: each output
	// pixel averages one block exactly (samples at ¼ and ¾ of each output
	// pixel fall on source pixel centres).
	big := image.NewGray(image.Rect(10, 10, 66, 66)) // non-zero origin
	for y := 10; y < 66; y++ {
		for x := 10; x < 66; x++ {
			if ((x-10)/2)%2 == 1 {
				big.SetGray(x, y, color.Gray{255})
			}
		}
	}
	got = FromImage(big)
	for x := range 28 {
		want := float32(x % 2)
		if g := got[784+5*28+x]; math.Abs(float64(g-want)) > 1e-6 {
			t.Fatalf("downscaled column %d: got %v, want %v", x, g, want)
		}
	}
	// Upscaling a constant image keeps it constant.
	tiny := image.NewGray(image.Rect(0, 0, 3, 5))
	for i := range tiny.Pix {
		tiny.Pix[i] = 128
	}
	for i, g := range FromImage(tiny) {
		if math.Abs(float64(g)-128.0/255) > 1e-6 {
			t.Fatalf("upscaled constant: value %d is %v", i, g)
		}
	}
	if !panics(func() { FromImage(image.NewGray(image.Rect(0, 0, 0, 3))) }) {
		t.Error("empty image did not panic")
	}
	if !panics(func() { GrayToRGB(make([]byte, 10)) }) {
		t.Error("GrayToRGB of 10 bytes did not panic")
	}
}
