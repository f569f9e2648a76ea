// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestActivityPriorFD checks the activity prior's gradient against central
// differences of its value along random directions (a sum of squared
// hinges: exact to rounding away from a kink, and the step of 10⁻⁴ crosses
// none at these points, which the test checks), its value against a slow
// reference that loops over the units by hand, and the pattern it reads:
// units with zero rows inactive, the others active; no prior from an
// update with no zero row (a noised one) or only zero rows.
func TestActivityPriorFD(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const units, in = 6, 20
	w, b := make([]float32, units*in), make([]float32, units)
	for i := range w {
		w[i] = float32(rng.NormFloat64() * 0.3)
	}
	for i := range b {
		b[i] = float32(rng.NormFloat64() * 0.3)
	}
	gw, gb := make([]float32, units*in), make([]float32, units)
	act := []bool{true, false, true, false, false, true}
	for i, a := range act {
		if a {
			gb[i] = float32(rng.NormFloat64())
			for j := range in {
				gw[i*in+j] = float32(rng.NormFloat64())
			}
		}
	}
	gw[2*in+3], gb[2] = 0.5, 0 // a row with a zero bias but a non-zero weight is active
	p, err := NewActivityPrior(w, b, gw, gb)
	if err != nil || p == nil {
		t.Fatalf("prior: %v, %v", p, err)
	}
	if !slices.Equal(p.active, act) || p.Active() != 3 {
		t.Fatalf("pattern %v, want %v", p.active, act)
	}
	// The slow reference: each unit's pre-activation and squared hinge.
	ref := func(x []float64) (float64, int) {
		var r float64
		var viol int
		for i := range units {
			z := float64(b[i])
			for j := range in {
				z += float64(w[i*in+j]) * x[j]
			}
			switch {
			case act[i] && z < 0:
				r += z * z / units
			case !act[i] && z > 0:
				r += z * z / units
			}
			if (z > 0) != act[i] {
				viol++
			}
		}
		return r, viol
	}
	checked := 0
	for trial := range 8 {
		x := make([]float32, in)
		for j := range x {
			x[j] = rng.Float32()
		}
		const weight = 0.7
		grad := make([]float32, in)
		v := p.add(x, weight, grad)
		want, nviol := ref(f64(x))
		if math.Abs(v-want) > 1e-6*math.Max(1, want) || p.Violations(x) != nviol {
			t.Errorf("trial %d: value %v, violations %d; the reference %v, %d", trial, v, p.Violations(x), want, nviol)
		}
		if nviol == 0 {
			continue
		}
		dir := make([]float32, in)
		for j := range dir {
			dir[j] = float32(rng.NormFloat64())
		}
		const h = 1e-4
		xp, xm := f64(x), f64(x)
		for j := range x {
			xp[j] += h * float64(dir[j])
			xm[j] -= h * float64(dir[j])
		}
		_, vp := ref(xp)
		_, vm := ref(xm)
		if vp != nviol || vm != nviol {
			t.Fatalf("trial %d: the step crosses a kink", trial)
		}
		up, _ := ref(xp)
		down, _ := ref(xm)
		fd := weight * (up - down) / (2 * h)
		var an float64
		for j, g := range grad {
			an += float64(g) * float64(dir[j])
		}
		if math.Abs(fd-an) > 1e-3*math.Abs(fd)+1e-6 {
			t.Errorf("trial %d: directional derivative %.6g, central difference %.6g", trial, an, fd)
		}
		checked++
	}
	if checked < 3 {
		t.Errorf("%d points with a violation, want at least 3 checked", checked)
	}
	noised := slices.Clone(gw)
	for i := range noised {
		noised[i] += float32(rng.NormFloat64())
	}
	nb := slices.Clone(gb)
	for i := range nb {
		nb[i] += float32(rng.NormFloat64())
	}
	if q, err := NewActivityPrior(w, b, noised, nb); q != nil || err != nil {
		t.Errorf("noised update: prior %v, error %v; want none", q, err)
	}
	if q, err := NewActivityPrior(w, b, make([]float32, len(gw)), make([]float32, units)); q != nil || err != nil {
		t.Errorf("all-zero update: prior %v, error %v; want none", q, err)
	}
	if _, err := NewActivityPrior(w, b[:5], gw, gb); err == nil {
		t.Errorf("sizes that do not fit: no error")
	}
}

// TestActivityPriorRound checks the pattern on the round of a non-private
// fedavg run (E = 2 local steps): the prior exists (some image.fc units
// are inactive on the example, some active) and the true image violates
// none of it, while the public mean image, the attack's start, does
// violate it on at least one of the examples.
func TestActivityPriorRound(t *testing.T) {
	t.Parallel()
	res, d := fedavgRun(t, 2, 3)
	up := res.Upload
	m, l := up.Model, up.Layout
	var pub [][]float32
	for _, e := range d.Public {
		pub = append(pub, e.Images[0])
	}
	mean := MeanImage(pub)
	var startViol int
	for k := range 3 {
		ex := &d.Private[k]
		g, err := up.Round(ex, k)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewActivityPrior(m.ImgFC.W.Data, m.ImgFC.B.Data, block(l, g, m.ImgFC.W), block(l, g, m.ImgFC.B))
		if err != nil || p == nil {
			t.Fatalf("example %d: prior %v, %v; want one", k, p, err)
		}
		if v := p.Violations(ex.Images[0]); v != 0 {
			t.Errorf("example %d: the true image violates %d of the revealed pattern's %d units", k, v, len(p.active))
		}
		startViol += p.Violations(mean)
		t.Logf("example %d: %d of %d units active; the mean image violates %d", k, p.Active(), len(p.active), p.Violations(mean))
	}
	if startViol == 0 {
		t.Errorf("the mean image violates no example's pattern: the test does not exercise the prior")
	}
}
