// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"fmt"
	"math"
)

// SSIM window and constants of Wang et al. (2004), §III-C: an 11×11
// circular-symmetric Gaussian window of standard deviation 1.5, normalised
// to unit sum, K₁ = 0.01 and K₂ = 0.03.
const (
	ssimWindow = 11
	ssimSigma  = 1.5
	ssimK1     = 0.01
	ssimK2     = 0.03
)

// ssimWeights returns the 1-D Gaussian of the window, normalised; the 2-D
// window is its outer product (also of unit sum).
func ssimWeights() [ssimWindow]float64 {
	var w [ssimWindow]float64
	var s float64
	for i := range w {
		d := float64(i - ssimWindow/2)
		w[i] = math.Exp(-d * d / (2 * ssimSigma * ssimSigma))
		s += w[i]
	}
	for i := range w {
		w[i] /= s
	}
	return w
}

// SSIM returns the mean structural similarity of x against orig, images of
// c channels of h×w values in [0, peak] in channel-major order: for each
// channel the SSIM map of Wang et al. (2004), Eq. (13),
//
//	SSIM(x, y) = (2μₓμᵧ + C₁)(2σₓᵧ + C₂) / ((μₓ² + μᵧ² + C₁)(σₓ² + σᵧ² + C₂)),
//
// with C₁ = (K₁·peak)², C₂ = (K₂·peak)², local statistics weighted by the
// 11×11 Gaussian window (σ = 1.5) at every position where the window fits
// in the image (MATLAB's filter2 'valid', as in the authors' ssim_index.m),
// averaged over positions (the MSSIM of Eq. (17)) and then over channels.
// It returns an error if the sizes do not match or an image is smaller
// than the window.
func SSIM(x, orig []float32, c, h, w int, peak float64) (float64, error) {
	if c <= 0 || len(x) != c*h*w || len(orig) != len(x) {
		return 0, fmt.Errorf("gia: ssim: images of %d and %d values, want %d×%d×%d", len(x), len(orig), c, h, w)
	}
	if h < ssimWindow || w < ssimWindow {
		return 0, fmt.Errorf("gia: ssim: a %d×%d image is smaller than the %d×%d window", h, w, ssimWindow, ssimWindow)
	}
	var s float64
	for ch := range c {
		o := ch * h * w
		s += ssimChannel(x[o:o+h*w], orig[o:o+h*w], h, w, peak)
	}
	return s / float64(c), nil
}

// ssimChannel returns the mean of the SSIM map of one channel.
func ssimChannel(x, y []float32, h, w int, peak float64) float64 {
	g := ssimWeights()
	c1, c2 := float64((ssimK1*peak)*(ssimK1*peak)), float64((ssimK2*peak)*(ssimK2*peak))
	oh, ow := h-ssimWindow+1, w-ssimWindow+1
	var total float64
	for i := range oh {
		for j := range ow {
			var mx, my, xx, yy, xy float64
			for a := range ssimWindow {
				for b := range ssimWindow {
					wt := g[a] * g[b]
					p := (i+a)*w + j + b
					u, v := float64(x[p]), float64(y[p])
					mx += float64(wt * u)
					my += float64(wt * v)
					xx += float64(wt * u * u)
					yy += float64(wt * v * v)
					xy += float64(wt * u * v)
				}
			}
			sx, sy, sxy := xx-float64(mx*mx), yy-float64(my*my), xy-float64(mx*my)
			total += (float64(2*mx*my) + c1) * (2*sxy + c2) / ((float64(mx*mx) + float64(my*my) + c1) * (sx + sy + c2))
		}
	}
	return total / float64(oh*ow)
}
