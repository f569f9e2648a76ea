// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import "math"

// ClipRule says how to clip one per-sample gradient. The flat gradient is
// split into parts: Part[j] is the part of element j (nil means one part,
// 0, for every element); an element with a negative part is dropped (set to
// zero, as a mask does). Part k is rescaled so that its L2 norm is at most
// C[k]: g_k ← g_k·min(1, C[k]/‖g_k‖₂).
//
// One part gives the flat clipping of DP-SGD; parts from an element mask give
// Rap-FT's two partitions with different bounds; parts from Layout.Parts give
// per-layer or per-modality clipping.
type ClipRule struct {
	Part []int32
	C    []float64
}

// Flat returns the rule that clips the whole gradient to norm c.
func Flat(c float64) ClipRule { return ClipRule{C: []float64{c}} }

// MaskParts returns a rule with two parts: elements where mask is nonzero
// form part 0, clipped to c0, and the others part 1, clipped to c1.
func MaskParts(mask []float32, c0, c1 float64) ClipRule {
	p := make([]int32, len(mask))
	for i, m := range mask {
		if m == 0 {
			p[i] = 1
		}
	}
	return ClipRule{Part: p, C: []float64{c0, c1}}
}

// Norms returns the L2 norm of every part of g under r (accumulated in
// float64). Dropped elements are not counted. It panics if r does not match
// g.
func Norms(g []float32, r ClipRule) []float64 {
	if r.Part != nil && len(r.Part) != len(g) || len(r.C) == 0 {
		panic(errClip)
	}
	ss := make([]float64, len(r.C))
	if r.Part == nil {
		ss[0] = sumSquares(g)
	} else {
		for j, v := range g {
			if k := r.Part[j]; k >= 0 {
				if int(k) >= len(ss) {
					panic(errClip)
				}
				ss[k] += float64(float64(v) * float64(v))
			}
		}
	}
	for k := range ss {
		ss[k] = math.Sqrt(ss[k])
	}
	return ss
}

// Clip rescales g in place by r and returns the norms of its parts before
// clipping. After Clip, every part's norm (computed in float64) is at most
// its bound: the scale factor is nudged down when float32 rounding would
// leave it a few ulps above. A part whose norm is not finite (a NaN or an
// infinite element) is set to zero, so the bound holds for every input; its
// returned norm is then NaN or +Inf, which tells the caller. It panics if r
// does not match g, a part index is not below len(r.C), or a bound is
// negative or NaN.
func Clip(g []float32, r ClipRule) []float64 {
	for _, c := range r.C {
		if !(c >= 0) {
			panic(errClip)
		}
	}
	norms := Norms(g, r)
	f := make([]float32, len(norms))
	for k, n := range norms {
		switch {
		case math.IsNaN(n) || math.IsInf(n, 0):
			f[k] = 0 // multiplying would leave NaN for an infinite element
		case n > r.C[k]:
			f[k] = float32(r.C[k] / n)
		default:
			f[k] = 1
		}
	}
	apply := func(nudge bool) {
		for j, v := range g {
			k := int32(0)
			if r.Part != nil {
				k = r.Part[j]
			}
			switch {
			case k < 0 || f[k] == 0:
				g[j] = 0
			case f[k] == 1:
			case nudge && v*f[k] == v:
				// Too small for the factor to change it (a subnormal):
				// step one ulp towards zero so the loop ends.
				g[j] = math.Nextafter32(v, 0)
			default:
				g[j] = v * f[k]
			}
		}
	}
	if r.Part == nil && f[0] != 0 {
		if f[0] != 1 {
			scale(f[0], g)
		}
	} else {
		apply(false)
	}
	// float32 rounding can leave a norm a few ulps above its bound; every
	// nudge strictly shrinks each nonzero element of such a part.
	for {
		after := Norms(g, r)
		over := false
		for k, n := range after {
			f[k] = 1
			if n > r.C[k] {
				f[k] = float32(1 - 1.0/(1<<22))
				over = true
			}
		}
		if !over {
			break
		}
		apply(true)
	}
	return norms
}

// ClipAll clips every per-sample gradient by r and returns their norms
// before clipping, norms[i][k] for example i and part k.
func ClipAll(gs [][]float32, r ClipRule) [][]float64 {
	if r.Part == nil && len(r.C) == 1 && r.C[0] >= 0 && !gradOff {
		return clipAllFlat(gs, r.C[0])
	}
	ns := make([][]float64, len(gs))
	for i, g := range gs {
		ns[i] = Clip(g, r)
	}
	return ns
}

// Sum adds the vectors gs in order (accumulating in float64) and stores the
// result in dst, which is allocated when nil. With no vectors the sum is
// zero: dst is cleared (and nil stays nil, the length being unknown). It
// panics if lengths differ.
func Sum(dst []float32, gs [][]float32) []float32 {
	if len(gs) == 0 {
		clear(dst)
		return dst
	}
	n := len(gs[0])
	if dst == nil {
		dst = make([]float32, n)
	}
	if len(dst) != n {
		panic(errLength)
	}
	acc := make([]float64, n)
	for _, g := range gs {
		if len(g) != n {
			panic(errLength)
		}
	}
	i := 0
	for ; i+4 <= len(gs) && !gradOff; i += 4 {
		// Four vectors a pass, each element's chain in their order.
		if !acc4(acc, (*[4][]float32)(gs[i:i+4])) {
			break
		}
	}
	for _, g := range gs[i:] {
		for j, v := range g {
			acc[j] += float64(v)
		}
	}
	for j, v := range acc {
		dst[j] = float32(v)
	}
	return dst
}

// ApplyMask multiplies g by the element mask m (1 keeps, 0 drops; other
// values scale). It panics if the lengths differ.
func ApplyMask(g, m []float32) {
	if len(g) != len(m) {
		panic(errLength)
	}
	for i, v := range m {
		g[i] *= v
	}
}
