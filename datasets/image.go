// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"image"
	"image/color"
)

// Image geometry shared by every task: RGB, 28×28, channel-major (CHW).
const (
	ImageChannels = 3
	ImageSize     = 28
	ImageLen      = ImageChannels * ImageSize * ImageSize // 2352
)

// GrayToRGB converts a 28×28 row-major grayscale image (0–255) into a new
// RGB CHW float32 slice in [0, 1] by replicating the gray level. It panics if
// len(gray) != 784.
func GrayToRGB(gray []byte) []float32 {
	const plane = ImageSize * ImageSize
	if len(gray) != plane {
		panic("datasets: gray image length mismatch")
	}
	out := make([]float32, ImageLen)
	for i, g := range gray {
		v := float32(g) / 255
		out[i], out[plane+i], out[2*plane+i] = v, v, v
	}
	return out
}

// FromImage resizes img to 28×28 and returns it as a new RGB CHW float32
// slice in [0, 1]. Alpha is ignored: colours are taken un-premultiplied, as
// if the image were opaque. Each output pixel averages a regular grid of bilinear samples over
// its footprint in the source (area averaging when shrinking, bilinear
// interpolation when enlarging). It panics on an empty image.
func FromImage(img image.Image) []float32 {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 {
		panic("datasets: empty image")
	}
	// Read the source once into float planes.
	src := make([]float32, 3*w*h)
	for y := range h {
		for x := range w {
			c := color.NRGBA64Model.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA64)
			src[y*w+x] = float32(c.R) / 0xffff
			src[w*h+y*w+x] = float32(c.G) / 0xffff
			src[2*w*h+y*w+x] = float32(c.B) / 0xffff
		}
	}
	sx, sy := float64(w)/ImageSize, float64(h)/ImageSize
	kx, ky := max(1, int(sx+0.999)), max(1, int(sy+0.999))
	out := make([]float32, ImageLen)
	const plane = ImageSize * ImageSize
	for oy := range ImageSize {
		for ox := range ImageSize {
			var acc [3]float64
			for j := range ky {
				fy := float64((float64(oy) + (float64(j)+0.5)/float64(ky)) * sy)
				for i := range kx {
					fx := float64((float64(ox) + (float64(i)+0.5)/float64(kx)) * sx)
					for c := range 3 {
						acc[c] += bilinear(src[c*w*h:(c+1)*w*h], w, h, fx-0.5, fy-0.5)
					}
				}
			}
			for c := range 3 {
				out[c*plane+oy*ImageSize+ox] = float32(acc[c] / float64(kx*ky))
			}
		}
	}
	return out
}

// bilinear samples plane p (w×h) at continuous pixel-centre coordinates
// (x, y), clamping at the borders.
func bilinear(p []float32, w, h int, x, y float64) float64 {
	x = min(max(x, 0), float64(w-1))
	y = min(max(y, 0), float64(h-1))
	x0, y0 := int(x), int(y)
	x1, y1 := min(x0+1, w-1), min(y0+1, h-1)
	ax, ay := x-float64(x0), y-float64(y0)
	top := float64(float64(p[y0*w+x0])*(1-ax)) + float64(float64(p[y0*w+x1])*ax)
	bot := float64(float64(p[y1*w+x0])*(1-ax)) + float64(float64(p[y1*w+x1])*ax)
	return float64(top*(1-ay)) + float64(bot*ay)
}
