// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"math"

	"github.com/repro-dp/repro/nn/cuda/ptx"
)

// A DPSGD configures the private part of one DP-SGD step (DPSGDStep).
type DPSGD struct {
	// Clip is the ℓ₂ bound C of every per-example gradient; > 0.
	Clip float64
	// Noise holds the Gaussian noise of every coordinate, σ·C·z_j with z
	// drawn on the host (methods.Privatizer's stream, so that the GPU adds
	// the noise the CPU would); nil adds none (σ = 0).
	Noise []float64
	// Batch is the expected batch size q·N, the normaliser; > 0.
	Batch float64
	// LR is the SGD learning rate.
	LR float32
}

// DPSGDStep runs the private part of one DP-SGD step on the GPU, the
// arithmetic of methods.Privatizer followed by a plain SGD update:
//
//  1. the norm of every per-example gradient grads[i] (accumulated in
//     float64 in a fixed tree order);
//  2. clipping as nn.Clip does: grads[i]·min(1, C/‖grads[i]‖) in
//     float32, zero for a non-finite norm, then steps of one ulp towards
//     zero while float32 rounding leaves a norm above C;
//  3. g = Σ_i clip(grads[i]), summed in order of i in float64 and rounded
//     to float32 (nn.Sum), plus Noise, divided by Batch (each step rounded
//     to float32 as the Privatizer rounds it);
//  4. theta ← theta − LR·g, in float32.
//
// It updates theta in place and returns g and the norms before clipping.
// grads is not modified. Every gradient must have len(theta) elements,
// and there are at most 65535 of them (one grid row per example: the
// driver's limit on grid.y); a larger batch is an error, not a launch.
// The norms differ from nn.Norms in the last bits (another summation
// order), which can move a clip factor by an ulp: the result agrees with
// the CPU's to float32 rounding, not bit for bit.
func (d *Device) DPSGDStep(theta []float32, grads [][]float32, s DPSGD) (g []float32, norms []float64, err error) {
	P, n := len(theta), len(grads)
	switch {
	case !(s.Clip > 0) || math.IsInf(s.Clip, 1):
		return nil, nil, fmt.Errorf("cuda: DPSGDStep: clip norm %v, want a finite value > 0", s.Clip)
	case !(s.Batch > 0) || math.IsInf(s.Batch, 1):
		return nil, nil, fmt.Errorf("cuda: DPSGDStep: batch %v, want a finite value > 0", s.Batch)
	case s.Noise != nil && len(s.Noise) != P:
		return nil, nil, fmt.Errorf("cuda: DPSGDStep: %d noise values for %d parameters", len(s.Noise), P)
	case P == 0:
		return nil, nil, errors.New("cuda: DPSGDStep: no parameters")
	}
	for i, gi := range grads {
		if len(gi) != P {
			return nil, nil, fmt.Errorf("cuda: DPSGDStep: gradient %d has %d elements, want %d", i, len(gi), P)
		}
	}
	g = make([]float32, P)
	norms = make([]float64, n)
	err = d.do(func() error {
		var bufs []*buffer
		defer func() {
			for _, b := range bufs {
				d.free(b)
			}
		}()
		get1 := func(bytes int64) (*buffer, error) {
			b, err := d.alloc(bytes)
			if err != nil {
				return nil, err
			}
			bufs = append(bufs, &b)
			return &b, nil
		}
		G, err := get1(4 * int64(n) * int64(P))
		if err != nil {
			return err
		}
		for i, gi := range grads {
			if err := put(G.ptr+devicePtr(4*i*P), gi); err != nil {
				return err
			}
		}
		ss, err := get1(8 * int64(n))
		if err != nil {
			return err
		}
		f, err := get1(4 * int64(n))
		if err != nil {
			return err
		}
		out, err := get1(4 * int64(P))
		if err != nil {
			return err
		}
		th, err := get1(4 * int64(P))
		if err != nil {
			return err
		}
		if n > 0 {
			if err := d.clip(G, ss, f, n, P, s.Clip, norms); err != nil {
				return err
			}
		}
		noise := ptx.P(0)
		if s.Noise != nil {
			nb, err := get1(8 * int64(P))
			if err != nil {
				return err
			}
			if err := put(nb.ptr, s.Noise); err != nil {
				return err
			}
			noise = p(*nb)
		}
		el, err := ptx.Elems(P)
		if err != nil {
			return err
		}
		if err := d.launch("sum_noise_scale", el, p(*G), ptx.I(n), ptx.I(P), noise, ptx.D(1/s.Batch), p(*out)); err != nil {
			return err
		}
		if err := put(th.ptr, theta); err != nil {
			return err
		}
		if err := d.launch("sgd_step", el, p(*th), p(*out), ptx.I(P), ptx.F(s.LR)); err != nil {
			return err
		}
		if err := get(g, out.ptr); err != nil {
			return err
		}
		return get(theta, th.ptr)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cuda: DPSGDStep: %w", err)
	}
	return g, norms, nil
}

// clip clips the n rows of G (length P) to norm c as nn.Clip does, using
// ss (n doubles) and f (n floats) on the device, and writes the norms
// before clipping to norms.
func (d *Device) clip(G, ss, f *buffer, n, P int, c float64, norms []float64) error {
	rows, err := ptx.Rows(n)
	if err != nil {
		return err
	}
	sc, err := ptx.ScaleRows(n, P)
	if err != nil {
		return err
	}
	sq := make([]float64, n)
	fs := make([]float32, n)
	sumsq := func() error {
		if err := d.launch("sumsq_rows", rows, p(*G), ptx.I(n), ptx.I(P), p(*ss)); err != nil {
			return err
		}
		return get(sq, ss.ptr)
	}
	if err := sumsq(); err != nil {
		return err
	}
	scale := false
	for i, s := range sq {
		norms[i] = math.Sqrt(s)
		fs[i] = ptx.ClipFactor(norms[i], c)
		scale = scale || fs[i] != 1
	}
	if scale {
		if err := put(f.ptr, fs); err != nil {
			return err
		}
		if err := d.launch("scale_rows", sc, p(*G), ptx.I(n), ptx.I(P), p(*f), ptx.I(0)); err != nil {
			return err
		}
	}
	// float32 rounding can leave a norm a few ulps above c: every nudge
	// strictly shrinks each nonzero element of such a row (nn.Clip).
	for {
		if err := sumsq(); err != nil {
			return err
		}
		over := false
		for i, s := range sq {
			fs[i] = 1
			if math.Sqrt(s) > c {
				fs[i] = ptx.NudgeFactor
				over = true
			}
		}
		if !over {
			return nil
		}
		if err := put(f.ptr, fs); err != nil {
			return err
		}
		if err := d.launch("scale_rows", sc, p(*G), ptx.I(n), ptx.I(P), p(*f), ptx.I(1)); err != nil {
			return err
		}
	}
}
