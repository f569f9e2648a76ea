// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
)

// WriteGrid writes a PNG reconstruction grid: the originals in the top row
// and the reconstructions below, each a c×h×w image in [0, 1] (c = 1 or 3)
// scaled up by an integer factor scale (≥ 1) with a 2-pixel white gap. It
// returns an error for mismatched or badly sized images.
func WriteGrid(w io.Writer, rows [][][]float32, c, h, wd, scale int) error {
	if len(rows) == 0 || len(rows[0]) == 0 || scale < 1 || (c != 1 && c != 3) {
		return fmt.Errorf("gia: grid of %d rows, %d channels, scale %d", len(rows), c, scale)
	}
	const gap = 2
	cols := len(rows[0])
	cw, ch := wd*scale+gap, h*scale+gap
	img := image.NewRGBA(image.Rect(0, 0, cols*cw+gap, len(rows)*ch+gap))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for r, row := range rows {
		if len(row) != cols {
			return fmt.Errorf("gia: grid row %d has %d images, want %d", r, len(row), cols)
		}
		for k, x := range row {
			if len(x) != c*h*wd {
				return fmt.Errorf("gia: grid image has %d values, want %d", len(x), c*h*wd)
			}
			draw(img, x, c, h, wd, scale, gap+k*cw, gap+r*ch)
		}
	}
	return png.Encode(w, img)
}

// draw paints the c×h×w image x in [0, 1] (c = 1 or 3, values outside
// clamped) onto img with its top left corner at (x0, y0), each pixel a
// scale×scale square, 8 bits per channel and opaque.
func draw(img *image.RGBA, x []float32, c, h, w, scale, x0, y0 int) {
	for i := range h * scale {
		for j := range w * scale {
			p := (i/scale)*w + j/scale
			var v [3]uint8
			for q := range 3 {
				v[q] = byte8(x[min(q, c-1)*h*w+p])
			}
			img.Set(x0+j, y0+i, color.RGBA{v[0], v[1], v[2], 255})
		}
	}
}

func byte8(v float32) uint8 {
	return uint8(min(255, max(0, float32(v*255)+0.5)))
}
