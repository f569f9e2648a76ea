// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/parallel"
	"github.com/repro-dp/repro/methods/mi"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

// StreamProjection seeds Sec-MMFL's random projections.
const StreamProjection = "methods/secmmfl-projection"

// A riskEstimator estimates Sec-MMFL's leakage risks R_i = I(G; D^i |
// D^{-i}) (Eq. 8) on public examples, at the model's current values:
//
//   - G: each example's gradient, flattened; each block (image encoder,
//     text encoder, head) reduced to q dimensions by a fixed Gaussian
//     random projection (N(0, 1/q) entries; Johnson–Lindenstrauss) and the
//     blocks concatenated, G̃ = [P_img g_img, P_text g_text, P_head g_head];
//   - D^image: the image's pixels, and D^text: the caption's bag of words,
//     each projected to q dimensions the same way (cmi_data=raw, the
//     default); or the model's image feature and pooled text feature
//     (cmi_data=features), projected likewise;
//   - R_i = mi.CMI(X = D^i, Y = G̃, Z = D^{-i}): D^i resampled among the k
//     nearest neighbours in D^{-i}.
//
// The examples are public and the model a post-processing of the uploads,
// so estimating costs no privacy.
type riskEstimator struct {
	run    *fedRun
	blocks []int32 // block of each layout element
	q      int
	data   []*datasets.Example
	gproj  []float32 // [q, layout.Size]
	dimg   [][]float64
	dtext  [][]float64
	// features: D^i is the model's feature of the modality (cmi_data).
	features     bool
	pfimg, pftxt []float32 // [q, Width] projections of the features
	opts         mi.CMIOptions
}

// newRiskEstimator returns the estimator of run, with an error if the task
// has too few valid public examples.
func newRiskEstimator(run *fedRun, blocks []int32) (*riskEstimator, error) {
	h := run.job.Hyper
	e := &riskEstimator{run: run, blocks: blocks, q: h.Int("projection"),
		opts: mi.CMIOptions{K: h.Int("cmi_k"), Steps: h.Int("cmi_steps"), Form: h.String("cmi_form")}}
	want := h.Int("cmi_examples")
	for i := range run.job.Data.Public {
		ex := &run.job.Data.Public[i]
		if len(e.data) < want && checkFusionExample(run.model, ex, run.model.Config.Classes) == nil {
			e.data = append(e.data, ex)
		}
	}
	if need := 4 * (e.opts.K + 1); len(e.data) < need {
		return nil, fmt.Errorf("methods: secmmfl: %d valid public examples for the risk estimate, want at least %d (k = %d)", len(e.data), need, e.opts.K)
	}
	rng := rand.New(rand.NewPCG(run.job.Seed, privacy.StreamID(StreamProjection)))
	e.gproj = gaussianMatrix(rng, e.q, run.layout.Size)
	c := run.model.Config
	pimg := gaussianMatrix(rng, e.q, c.Channels*c.ImageSize*c.ImageSize)
	ptext := gaussianMatrix(rng, e.q, c.Vocab)
	for _, ex := range e.data {
		e.dimg = append(e.dimg, project(pimg, e.q, ex.Images[0]))
		bow := make([]float32, c.Vocab)
		for _, id := range ex.Prompt {
			bow[id]++
		}
		e.dtext = append(e.dtext, project(ptext, e.q, bow))
	}
	if h.String("cmi_data") == "features" {
		e.features = true
		e.pfimg, e.pftxt = gaussianMatrix(rng, e.q, c.Width), gaussianMatrix(rng, e.q, c.Width)
	}
	return e, nil
}

// gaussianMatrix returns a [rows, cols] matrix of N(0, 1/rows) entries.
func gaussianMatrix(rng *rand.Rand, rows, cols int) []float32 {
	m := make([]float32, rows*cols)
	s := 1 / math.Sqrt(float64(rows))
	for i := range m {
		m[i] = float32(s * rng.NormFloat64())
	}
	return m
}

// project returns P·x for P of shape [rows, len(x)].
func project(p []float32, rows int, x []float32) []float64 {
	out := make([]float64, rows)
	for r := range rows {
		row := p[r*len(x) : (r+1)*len(x)]
		s := 0.0
		for j, v := range x {
			s += float64(float64(row[j]) * float64(v))
		}
		out[r] = s
	}
	return out
}

// featureData returns the projected image and text features of the data
// at the model's current values.
func (e *riskEstimator) featureData() (img, text [][]float64) {
	m := e.run.model
	c := m.Config
	for _, ex := range e.data {
		t := nn.NewTape(nil, nil)
		in := t.Input(nn.Tensor{Shape: []int{c.Channels, c.ImageSize, c.ImageSize}, Data: ex.Images[0]}, false)
		f, p := m.FeaturesFrom(t, in, ex.Prompt, nil)
		img = append(img, project(e.pfimg, e.q, f.Value.Data))
		text = append(text, project(e.pftxt, e.q, p.Value.Data))
	}
	return img, text
}

// riskChunk is the number of per-example gradients held at once.
const riskChunk = 32

// estimate returns the risks of the modalities (mmModalities order) at the
// model's current values, for the segment starting at round r.
func (e *riskEstimator) estimate(r int) ([]float64, error) {
	g, err := e.gradients()
	if err != nil {
		return nil, err
	}
	o := e.opts
	o.Seed = e.run.job.Seed ^ uint64(r)<<20
	dimg, dtext := e.dimg, e.dtext
	if e.features {
		dimg, dtext = e.featureData()
	}
	rImg, err := mi.CMI(dimg, g, dtext, &o)
	if err != nil {
		return nil, fmt.Errorf("methods: secmmfl: image risk: %w", err)
	}
	rText, err := mi.CMI(dtext, g, dimg, &o)
	if err != nil {
		return nil, fmt.Errorf("methods: secmmfl: text risk: %w", err)
	}
	return []float64{rImg, rText}, nil
}

// gradients returns the projected per-example gradients G̃ of the data.
func (e *riskEstimator) gradients() ([][]float64, error) {
	run := e.run
	m := run.model
	nb := len(mmModalities) + 1
	out := make([][]float64, 0, len(e.data))
	for from := 0; from < len(e.data); from += riskChunk {
		chunk := e.data[from:min(from+riskChunk, len(e.data))]
		res, err := nn.PerSample(run.layout, len(chunk), func(t *nn.Tape, i int) (*nn.Node, error) {
			ex := chunk[i]
			return m.Loss(t, ex.Images[0], ex.Prompt, ex.Label, nil)
		}, &nn.Options{Workers: run.job.Workers})
		if err != nil {
			return nil, fmt.Errorf("methods: secmmfl: risk gradients: %w", err)
		}
		proj := make([][]float64, len(res.Grads))
		err = parallel.For(len(res.Grads), run.job.Workers, func(i int) error {
			proj[i] = e.projectGradient(res.Grads[i], nb)
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, proj...)
	}
	return out, nil
}

// projectGradient returns [P g_b for each block b] for the gradient g of
// nb blocks, each row summed in float64 in coordinate order.
func (e *riskEstimator) projectGradient(g []float32, nb int) []float64 {
	v := make([]float64, nb*e.q)
	for row := range e.q {
		p := e.gproj[row*len(g) : (row+1)*len(g)]
		for j, x := range g {
			v[int(e.blocks[j])*e.q+row] += float64(float64(p[j]) * float64(x))
		}
	}
	return v
}
