// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// panics runs fn and reports whether it panicked, and with what message.
func panics(fn func()) (panicked bool, msg string) {
	defer func() {
		if r := recover(); r != nil {
			panicked, msg = true, fmt.Sprint(r)
		}
	}()
	fn()
	return false, ""
}

func TestPanics(t *testing.T) {
	t.Parallel()
	tp := NewTape(nil, nil)
	a := tp.Input(NewTensor(2, 3), false)
	w := tp.Input(NewTensor(4, 5), false)
	for _, tc := range []struct {
		desc string
		fn   func()
		want Error
	}{
		{"affine shape", func() { tp.Affine(a, w, nil) }, errShape},
		{"add shape", func() { tp.Add(a, w) }, errShape},
		{"heads", func() { tp.Attention(a, a, a, 2, false) }, errHeads},
		{"embed index", func() { tp.Embed(w, []int{4}) }, errIndex},
		{"layout", func() { NewTape(NewLayout(nil), make([]float32, 3)) }, errLayout},
		{"clip", func() { Clip(make([]float32, 3), ClipRule{Part: []int32{0}, C: []float64{1}}) }, errClip},
		{"negative clip", func() { Clip(make([]float32, 3), Flat(-1)) }, errClip},
		{"sum", func() { Sum(nil, [][]float32{{1}, {1, 2}}) }, errLength},
	} {
		ok, msg := panics(tc.fn)
		if !ok || msg != tc.want.Error() {
			t.Errorf("%s: panicked %v with %q, want %q", tc.desc, ok, msg, tc.want.Error())
		}
	}
	// A panic inside a loss function reaches the caller's goroutine.
	ok, msg := panics(func() {
		PerSample(NewLayout(nil), 4, func(t *Tape, i int) (*Node, error) {
			if i == 2 {
				t.Affine(a, w, nil)
			}
			return t.Sum(t.Input(NewTensor(1), false)), nil
		}, nil)
	})
	if !ok || msg != errShape.Error() {
		t.Errorf("panic in a loss function: panicked %v with %q", ok, msg)
	}
	if g, _, _, err := Gradient(NewLayout(nil), 0, nil, nil); err != nil || g == nil {
		t.Errorf("empty batch: gradient %v, error %v", g, err)
	}
	tp2 := NewTape(nil, nil)
	x := tp2.Input(NewTensor(1), true)
	y := tp2.Sum(x)
	tp2.Backward(y)
	if ok, msg := panics(func() { tp2.Backward(y) }); !ok || msg != errTapeDone.Error() {
		t.Errorf("second backward: panicked %v with %q", ok, msg)
	}
}

func TestDropout(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.Dropout = 0.3
	c.PEFT = PEFT{Method: "full"}
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	l := NewLayout(m.Params())
	rng := rand.New(rand.NewPCG(40, 40))
	batch := []Sequence{vqa(rng, c, 4, 2), vqa(rng, c, 4, 2)}
	eval, err := m.PerSample(l, batch, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr1, _ := m.PerSample(l, batch, nil, nil, &Options{Train: true, Seed: 7})
	tr2, _ := m.PerSample(l, batch, nil, nil, &Options{Train: true, Seed: 7, Workers: 1})
	tr3, _ := m.PerSample(l, batch, nil, nil, &Options{Train: true, Seed: 8})
	if !slices.Equal(tr1.Grads[0], tr2.Grads[0]) {
		t.Error("dropout with the same seed differs between worker counts")
	}
	if slices.Equal(tr1.Grads[0], eval.Grads[0]) || slices.Equal(tr1.Grads[0], tr3.Grads[0]) {
		t.Error("dropout has no effect or ignores its seed")
	}
	// Evaluation mode is the deterministic model.
	ev2, _ := m.PerSample(l, batch, nil, nil, nil)
	if !slices.Equal(ev2.Grads[1], eval.Grads[1]) {
		t.Error("evaluation mode is not deterministic")
	}
	// Dropout keeps the mean: over many draws E[y] = x.
	tp := NewTape(nil, nil)
	tp.Train, tp.Rand = true, rand.New(rand.NewPCG(1, 2))
	x := NewTensor(100000)
	for i := range x.Data {
		x.Data[i] = 1
	}
	y := tp.Dropout(tp.Input(x, false), 0.3)
	var s float64
	for _, v := range y.Value.Data {
		s += float64(v)
	}
	// The mean of 1e5 draws of Bernoulli(0.7)/0.7 has standard deviation
	// √(0.3/0.7/1e5) ≈ 0.0021; 0.01 is about 5 standard deviations
	// (false-reject probability below 1e-6).
	if mean := s / 1e5; math.Abs(mean-1) > 0.01 {
		t.Errorf("dropout mean %v, want 1", mean)
	}
}

func TestPredict(t *testing.T) {
	t.Parallel()
	c := smokeConfig(t)
	c.Classes = 3
	v, _ := NewViT(c)
	f, _ := NewFusion(c)
	img := randImage(rand.New(rand.NewPCG(1, 1)), c)
	for _, pred := range []func() (int, []float64, error){
		func() (int, []float64, error) { return v.Predict(img) },
		func() (int, []float64, error) { return f.Predict(img, []int{2, 5, 6}) },
	} {
		k, p, err := pred()
		if err != nil {
			t.Fatal(err)
		}
		var s float64
		for _, q := range p {
			s += q
		}
		if math.Abs(s-1) > 1e-6 || p[k] != slices.Max(p) {
			t.Errorf("prediction %d with probabilities %v", k, p)
		}
	}
	if _, _, err := v.Predict(img[:10]); err == nil {
		t.Error("short image accepted")
	}
}
