// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// LossFunc builds the loss of example i of a batch on the tape t and returns
// it as a scalar node. It is called once per example, possibly from several
// goroutines at once (each with its own tape), so it must not write shared
// state.
type LossFunc func(t *Tape, i int) (*Node, error)

// Options configures PerSample and Gradient. A nil *Options means the
// defaults.
type Options struct {
	// Workers is the number of goroutines; 0 means GOMAXPROCS. Results do
	// not depend on it.
	Workers int
	// Train turns dropout on (default off, as DP training wants).
	Train bool
	// Seed seeds the dropout stream of every example: example i draws from
	// rand.NewPCG(Seed, i).
	Seed uint64
	// Mask, when not nil, is an element mask over the layout (see
	// Layout.Mask and Layout.RowMask) applied to every per-sample gradient
	// as soon as it is computed, so norms, clipping and sums only ever see
	// the masked gradient (SPARTA's row mask, a pruned block set).
	Mask []float32
	// Reuse lets each worker run the tapes of its examples in one arena of
	// memory, reused from tape to tape and from call to call,
	// instead of allocating every activation and gradient anew (which
	// costs about a fifth of a step in allocation and garbage collection).
	// The results are the same bits either way. With Reuse, a tensor a
	// Hooks callback receives is valid only until the loss function of its
	// example returns: a hook must copy what it keeps. Default off.
	Reuse bool
	// Visual, when not nil, keeps the visual tokens of the images seen
	// from call to call on the batched engine (TinyMLLM.PerSample,
	// Gradient and MeanLosses) while the vision encoder and the projector
	// are frozen (see VisualCache; LossCached reads it on the one-tape
	// path of a visual transform). The results are the same bits either
	// way.
	Visual *VisualCache
	// Share, when not nil, carries the values of a batch's forward pass
	// that do not depend on the layout's tensors from one
	// TinyMLLM.MeanLosses call to the next (see PassShare). The results
	// are the same bits either way. Other functions ignore it.
	Share *PassShare
}

// Stats describes the cost of one batch: wall time and the bytes of
// training state it held beyond the parameters themselves (per-sample or
// accumulated gradients, and the tapes of the examples in flight:
// activations, their gradients and what backward rules keep).
type Stats struct {
	Examples int
	Elapsed  time.Duration
	// GradBytes counts the gradient vectors: one per example for
	// PerSample, one per example group plus the sum for Gradient.
	GradBytes int64
	// TapeBytes is the largest tape: of one example, or of one group of
	// examples on the batched engine (batch.go).
	TapeBytes int64
	// PeakTapeBytes is the largest total of tapes alive at once. It
	// depends on scheduling and the number of workers.
	PeakTapeBytes int64
}

// PeakBytes returns the peak bytes of training state beyond the
// parameters: gradients and live tapes. Add ModelBytes and an optimizer's
// state for the whole footprint (Meter.Add takes them as extra).
func (s Stats) PeakBytes() int64 { return s.GradBytes + s.PeakTapeBytes }

// Result holds the per-sample gradients of a batch.
type Result struct {
	// Grads[i] is the gradient of example i's loss with respect to the
	// layout's parameters, a flat vector of length Layout.Size. The caller
	// owns it.
	Grads [][]float32
	// Losses[i] is example i's loss.
	Losses []float64
	Stats  Stats
}

// PerSample computes, for each of the n examples, the gradient of its loss
// with respect to the parameters of l, exactly, one tape per example. It
// returns the first error a loss function returns (lowest example index).
func PerSample(l *Layout, n int, loss LossFunc, opt *Options) (*Result, error) {
	start := time.Now()
	r := &Result{Grads: make([][]float32, n), Losses: make([]float64, n)}
	for i := range r.Grads {
		r.Grads[i] = make([]float32, l.Size)
	}
	units := make([][2]int, n)
	for i := range units {
		units[i] = [2]int{i, i + 1}
	}
	st, err := run(l, units, loss, opt, func(i int) []float32 { return r.Grads[i] }, r.Losses)
	if err != nil {
		return nil, err
	}
	st.GradBytes = int64(4 * n * l.Size)
	st.Elapsed = time.Since(start)
	r.Stats = st
	return r, nil
}

// gradientChunks is the number of example groups Gradient accumulates
// separately before adding the groups in order. It is a constant, not the
// number of workers, so the result does not depend on GOMAXPROCS.
const gradientChunks = 16

// Gradient returns the sum over the n examples of the gradients of their
// losses (the batch gradient; divide by the batch size for the mean), and
// the losses. It holds at most 16 gradient vectors instead of n: examples
// are split into 16 contiguous groups, each accumulated on its own, and the
// group sums are added in order, so the result is the same whatever
// GOMAXPROCS is and equals the sum of PerSample's gradients up to float32
// rounding.
func Gradient(l *Layout, n int, loss LossFunc, opt *Options) ([]float32, []float64, Stats, error) {
	start := time.Now()
	if n == 0 {
		return make([]float32, l.Size), nil, Stats{}, nil
	}
	k := min(n, gradientChunks)
	bufs := make([][]float32, k)
	units := make([][2]int, k)
	for c := range units {
		units[c] = [2]int{c * n / k, (c + 1) * n / k}
		bufs[c] = make([]float32, l.Size)
	}
	losses := make([]float64, n)
	st, err := run(l, units, loss, opt, func(c int) []float32 { return bufs[c] }, losses)
	if err != nil {
		return nil, nil, Stats{}, err
	}
	g := Sum(nil, bufs)
	st.GradBytes = int64(4 * (k + 1) * l.Size)
	st.Elapsed = time.Since(start)
	return g, losses, st, nil
}

// run evaluates the losses of the examples in parallel. Each unit is a
// range of examples [from, to) that one goroutine runs in order,
// accumulating their gradients into grad(unit).
func run(l *Layout, units [][2]int, loss LossFunc, opt *Options, grad func(int) []float32, losses []float64) (Stats, error) {
	if opt == nil {
		opt = &Options{}
	}
	if opt.Mask != nil && len(opt.Mask) != l.Size {
		panic(errLayout)
	}
	n := len(losses)
	errs := make([]error, n)
	tapeBytes := make([]int64, n)
	var live liveBytes
	workers(opt.Workers, len(units), opt.Reuse, func(a *arena, u int) {
		g := grad(u)
		for i := units[u][0]; i < units[u][1]; i++ {
			if a != nil {
				a.reset()
			}
			t := NewTape(l, g)
			t.arena = a
			t.Train = opt.Train
			if opt.Train {
				t.Rand = rand.New(rand.NewPCG(opt.Seed, uint64(i)))
			}
			out, err := loss(t, i)
			if err != nil {
				errs[i] = err
				continue
			}
			b := t.Bytes()
			live.add(b)
			losses[i] = float64(out.Value.Data[0])
			t.Backward(out)
			tapeBytes[i] = t.Bytes()
			live.add(t.Bytes() - b)
			live.add(-t.Bytes())
		}
		if opt.Mask != nil {
			ApplyMask(g, opt.Mask)
		}
	})
	for _, err := range errs {
		if err != nil {
			return Stats{}, err
		}
	}
	st := Stats{Examples: n, PeakTapeBytes: live.peak.Load()}
	for _, b := range tapeBytes {
		st.TapeBytes = max(st.TapeBytes, b)
	}
	return st, nil
}

// workers runs body(a, u) for every unit u < units on w goroutines (0:
// GOMAXPROCS), each taking units in turn and, with reuse, running them in
// its own arena a (nil otherwise). The loop is nn's own, not
// internal/parallel.For, because nn imports nothing of repro and because it
// re-raises a panic of body (a programmer error) on the caller's
// goroutine, where a runner can recover it.
func workers(w, units int, reuse bool, body func(a *arena, u int)) {
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	w = min(w, units)
	var next atomic.Int64
	var wg sync.WaitGroup
	var panicOnce sync.Once
	var panicked any
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					panicOnce.Do(func() { panicked = r })
					next.Store(int64(units))
				}
			}()
			var a *arena
			if reuse {
				a = arenas.Get().(*arena)
				defer arenas.Put(a)
			}
			for {
				u := int(next.Add(1) - 1)
				if u >= units {
					return
				}
				body(a, u)
			}
		}()
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}

// liveBytes tracks the bytes of the tapes alive across workers and their
// peak.
type liveBytes struct {
	live, peak atomic.Int64
}

// add changes the live bytes by d and raises the peak to match.
func (m *liveBytes) add(d int64) {
	cur := m.live.Add(d)
	for {
		p := m.peak.Load()
		if cur <= p || m.peak.CompareAndSwap(p, cur) {
			return
		}
	}
}

// ModelBytes returns the bytes of the values of every parameter of m.
func ModelBytes(m Module) int64 {
	var b int64
	for _, p := range m.Params() {
		b += int64(4 * len(p.Data))
	}
	return b
}
