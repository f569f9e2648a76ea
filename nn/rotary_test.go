// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRotaryRelative checks the defining property of rotary embeddings
// against its closed form (RoFormer, eq. 16): for one frequency pair, the
// dot product of a query rotated at row p and a key rotated at row p′ is
// (q_a k_a + q_b k_b)·cos((p′−p)θ) + (q_b k_a − q_a k_b)·sin((p′−p)θ),
// so it depends on p − p′ only; and rotations preserve norms.
func TestRotaryRelative(t *testing.T) {
	t.Parallel()
	const T, heads, dh = 40, 2, 8
	D, half := heads*dh, dh/2
	rng := rand.New(rand.NewPCG(9, 9))
	q, k := make([]float32, D), make([]float32, D)
	for i := range q {
		q[i], k[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	// The same q and k at every row.
	rep := func(v []float32) Tensor {
		x := NewTensor(T, D)
		for p := 0; p < T; p++ {
			copy(x.Data[p*D:], v)
		}
		return x
	}
	rotaryTable(3, dh) // the table for 40 rows then grows from a cached prefix
	tp := NewTape(nil, nil)
	rq := tp.Rotary(tp.Input(rep(q), false), heads).Value
	rk := tp.Rotary(tp.Input(rep(k), false), heads).Value
	for _, pp := range [][2]int{{0, 0}, {5, 2}, {39, 0}, {17, 30}, {36, 33}} {
		p, p2 := pp[0], pp[1]
		for h := 0; h < heads; h++ {
			var got, want, nq, nq0 float64
			for i := 0; i < half; i++ {
				a, b := h*dh+i, h*dh+i+half
				got += float64(rq.Data[p*D+a])*float64(rk.Data[p2*D+a]) + float64(rq.Data[p*D+b])*float64(rk.Data[p2*D+b])
				theta := math.Pow(10000, -2*float64(i)/dh)
				d := float64(p2-p) * theta
				qa, qb, ka, kb := float64(q[a]), float64(q[b]), float64(k[a]), float64(k[b])
				want += (qa*ka+qb*kb)*math.Cos(d) + (qb*ka-qa*kb)*math.Sin(d)
				nq += float64(rq.Data[p*D+a])*float64(rq.Data[p*D+a]) + float64(rq.Data[p*D+b])*float64(rq.Data[p*D+b])
				nq0 += qa*qa + qb*qb
			}
			if math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Errorf("rows (%d, %d), head %d: q·k = %.7g, closed form %.7g", p, p2, h, got, want)
			}
			if math.Abs(nq-nq0) > 1e-5*nq0 {
				t.Errorf("row %d, head %d: |Rq|² = %.7g, |q|² = %.7g", p, h, nq, nq0)
			}
		}
	}
	// Row 0 is not rotated.
	for i := 0; i < D; i++ {
		if rq.Data[i] != q[i] {
			t.Fatalf("row 0 column %d: %v, want %v unrotated", i, rq.Data[i], q[i])
		}
	}
}

func TestRotaryConfig(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.Positions = "rope"
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	if m.Pos != nil || Lookup(m, "lm.pos") != nil {
		t.Error("rotary model has a position embedding")
	}
	for _, b := range m.LM.Blocks {
		if !b.Rotary {
			t.Errorf("%s: not rotary", b.Name)
		}
	}
	for _, b := range m.Vision.Stack.Blocks {
		if b.Rotary {
			t.Errorf("%s: vision block rotary", b.Name)
		}
	}
	for _, bad := range []struct {
		positions string
		width     int
	}{{"alibi", 32}, {"rope", 30}} {
		c := smokeConfig(t)
		c.Positions, c.Width, c.Heads = bad.positions, bad.width, 2
		if bad.width == 30 {
			c.Heads = 6 // head width 5, odd
		}
		if _, err := NewTinyMLLM(c); err == nil {
			t.Errorf("positions %q, width %d, %d heads: no error", c.Positions, c.Width, c.Heads)
		}
	}
}
