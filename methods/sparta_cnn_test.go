// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/nn"
)

// cnnJob is vitJob with a freshly initialised smoke CNN (model = cnn, or
// cnn-gn where params says so: two groups in each block's norm) whose head
// is for the four public coarse labels.
func cnnJob(t testing.TB, n int, eps float64, params map[string]any) *Job {
	t.Helper()
	model, _ := params["model"].(string)
	if model == "" {
		model = modelCNN
	}
	job := classifierJob(t, "sparta", n, eps, with(params, "model", model))
	_, cfg := job.Model.Describe()
	if model == modelCNNGN {
		cfg.ConvGroups = 2
	}
	m, err := nn.NewCNN(cfg)
	if err != nil {
		t.Fatal(err)
	}
	job.Model = m
	return job
}

// TestSpartaCNNEveryMask runs every mask on the CNN and checks after every
// step that no convolution weight moves before the sparse phase and that
// in it only the kept filters (rows) or elements move (every weight for
// all, none for last and dpbitfit); that SPARTA keeps ⌈s·R⌉ whole filters
// of each convolution; that the head was replaced for the ten fine labels;
// and that ε never exceeds the target (oracle: not private). The CNN with
// group norms (cnn-gn) runs sparta and all.
func TestSpartaCNNEveryMask(t *testing.T) {
	t.Parallel()
	const s = 0.3
	for _, model := range []string{modelCNN, modelCNNGN} {
		for _, mask := range spartaMasks {
			if model == modelCNNGN && mask != maskSPARTA && mask != maskAll {
				continue
			}
			testSpartaCNNMask(t, model, mask, s)
		}
	}
}

func testSpartaCNNMask(t *testing.T, model, mask string, s float64) {
	t.Run(model+"/"+mask, func(t *testing.T) {
		t.Parallel()
		eps := 1.0
		if mask == maskOracle {
			eps = math.Inf(1)
		}
		job := cnnJob(t, 48, eps, with(tinyRun, "mask", mask, "sparsity", s, "model", model))
		r, err := newViTRun(job)
		if err != nil {
			t.Fatal(err)
		}
		// The new head replaced every tensor: r.weights are the
		// model's from the run's start on.
		init := map[string][]float32{}
		for _, p := range maskable(job.Model.Params(), spartaLayers) {
			init[p.Name] = slices.Clone(p.Data)
		}
		if len(init) != 3 {
			t.Fatalf("%d maskable weights, want the 3 convolutions", len(init))
		}
		moved := 0
		job.Progress = func(done, total int) {
			for _, p := range r.weights {
				for j, v := range p.Data {
					if v == init[p.Name][j] {
						continue
					}
					switch {
					case done <= r.totalSteps()-r.sched.train:
						t.Fatalf("step %d of %d: %s element %d moved before the sparse phase", done, total, p.Name, j)
					case mask == maskAll:
					case r.keep[p] == nil || !r.keep[p][j]:
						t.Fatalf("step %d of %d: %s element %d (filter %d) is frozen but moved", done, total, p.Name, j, j/p.RowLen())
					}
					moved++
				}
			}
		}
		res, err := r.run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if (moved == 0) != (mask == maskLast || mask == maskBitFit) {
			t.Errorf("%d convolution weight moves", moved)
		}
		cnn := job.Model.(*nn.CNN)
		if cnn.Config.Classes != 10 || cnn.Head.W.Rows() != 10 {
			t.Errorf("head for %d classes, want 10", cnn.Head.W.Rows())
		}
		if mask == maskSPARTA {
			for _, p := range r.weights {
				kept := 0
				for row := range p.Rows() {
					k := r.keep[p][row*p.RowLen() : (row+1)*p.RowLen()]
					if slices.Contains(k, !k[0]) {
						t.Fatalf("%s filter %d is not kept or dropped whole", p.Name, row)
					}
					if k[0] {
						kept++
					}
				}
				if want := int(math.Ceil(s * float64(p.Rows()))); kept != want {
					t.Errorf("%s: %d of %d filters kept, want %d", p.Name, kept, p.Rows(), want)
				}
			}
		}
		if got := float64(res.Privacy.Epsilon); mask != maskOracle && (got > eps || res.EpsilonPLD > eps) {
			t.Errorf("ε = %v (PLD %v), target %v", got, res.EpsilonPLD, eps)
		}
	})
}

// TestSpartaCNNModelMismatch checks that the model hyperparameter must name
// the job's model: a CNN with model = vit and a ViT with model = cnn are
// errors before anything changes, and BaseArch reads the hyperparameter.
func TestSpartaCNNModelMismatch(t *testing.T) {
	t.Parallel()
	cnn := cnnJob(t, 48, 1, tinyRun)
	cnn.Hyper = spartaHyper(t, "smoke", tinyRun)
	vit := vitJob(t, 48, 1, with(tinyRun, "model", modelCNN))
	gn := cnnJob(t, 48, 1, with(tinyRun, "model", modelCNNGN))
	gn.Hyper = spartaHyper(t, "smoke", with(tinyRun, "model", modelCNN))
	plain := cnnJob(t, 48, 1, tinyRun)
	plain.Hyper = spartaHyper(t, "smoke", with(tinyRun, "model", modelCNNGN))
	for _, job := range []*Job{cnn, vit, gn, plain} {
		before := nn.NewLayout(nn.SetTrainable(job.Model, func(*nn.Param) bool { return true }).Params).Values()
		_, err := SPARTA{}.FineTune(context.Background(), job)
		if err == nil || !strings.Contains(err.Error(), "model = ") {
			arch, _ := job.Model.Describe()
			t.Errorf("%s with model = %s: error %v", arch, job.Hyper.String("model"), err)
		}
		if after := nn.NewLayout(nn.SetTrainable(job.Model, func(*nn.Param) bool { return true }).Params).Values(); !slices.Equal(before, after) {
			t.Errorf("the model changed")
		}
	}
	if got := BaseArch(SPARTA{}, map[string]any{"model": "cnn"}); got != "cnn" {
		t.Errorf("BaseArch(sparta, model = cnn) = %s", got)
	}
	if got := BaseArch(SPARTA{}, map[string]any{"model": "cnn-gn"}); got != "cnn-gn" {
		t.Errorf("BaseArch(sparta, model = cnn-gn) = %s", got)
	}
	if got := BaseArch(SPARTA{}, map[string]any{"mask": "all"}); got != "vit" {
		t.Errorf("BaseArch(sparta) = %s, want vit", got)
	}
	if got := BaseArch(DPSGD{}, map[string]any{"model": "cnn"}); got != "tinymllm" {
		t.Errorf("BaseArch(dpsgd, model = cnn) = %s, want its Arch", got)
	}
	if def := spartaHyper(t, "small", nil).String("model"); def != (SPARTA{}).Arch() {
		t.Errorf("model defaults to %s, not the method's Arch %s", def, SPARTA{}.Arch())
	}
}

// TestSpartaScoresCNN checks SPARTA's scoring epoch on the CNN against
// refScores, with each example's gradient over the scoring layout (the
// warm-up tensors and the three convolution weights, jointly clipped)
// computed on its own tape by nn.Gradient (the CNN's gradients are checked
// against finite differences in nn's TestCNNPerSampleGradient), and the
// filters kept against the reference's filter scores: the scores of a
// weight [F, C, 3, 3] summed over (c, i, j) for each filter f.
func TestSpartaScoresCNN(t *testing.T) {
	t.Parallel()
	const n, s = 48, 0.25
	job := cnnJob(t, n, 1, with(tinyRun, "sparsity", s))
	job.Workers = 2
	r, err := newViTRun(job)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.setParams(); err != nil {
		t.Fatal(err)
	}
	r.res = &Result{}
	if err := r.runPhase(context.Background(), r.scorePhase()); err != nil {
		t.Fatal(err)
	}
	if err := r.choose(); err != nil {
		t.Fatal(err)
	}
	l := r.scoreLayout
	grad := func(i int) []float64 {
		g, _, _, err := nn.Gradient(l, 1, func(tp *nn.Tape, _ int) (*nn.Node, error) { return r.loss(tp, i) }, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(g))
		for j, v := range g {
			out[j] = float64(v)
		}
		return out
	}
	want := refScores(maskSPARTA, n, r.sched.score, l.Size, 12.0/n, r.acc.Sigma, 1, 12, phaseSeed(job.Seed, "score"), grad)
	checkScores(t, r, want, nil, s)
	for _, p := range r.weights {
		i := l.Index(p)
		u := want[l.Offsets[i]:l.Offsets[i+1]]
		f, c := p.Shape[0], p.Shape[1]
		filter := make([]float64, f)
		for fi := range f {
			for ci := range c {
				for a := range 3 {
					for b := range 3 {
						filter[fi] += u[((fi*c+ci)*3+a)*3+b]
					}
				}
			}
		}
		order := make([]int, f)
		for j := range order {
			order[j] = j
		}
		slices.SortStableFunc(order, func(a, b int) int { return -cmpFloat(filter[a], filter[b]) })
		k := int(math.Ceil(s * float64(f)))
		for rank, fi := range order {
			for j := fi * c * 9; j < (fi+1)*c*9; j++ {
				if r.keep[p][j] != (rank < k) {
					t.Fatalf("%s filter %d (score %v, rank %d of %d, keep %d): element %d kept %v", p.Name, fi, filter[fi], rank, f, k, j, r.keep[p][j])
				}
			}
		}
	}
}
