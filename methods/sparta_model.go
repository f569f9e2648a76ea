// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"fmt"

	"github.com/repro-dp/repro/nn"
)

// The classifiers SPARTA fine-tunes (its model hyperparameter): the ViT
// and the small CNN (the paper's Wide-ResNet stand-in), each from its own
// public-pretrained base.
const (
	modelViT   = "vit"
	modelCNN   = "cnn"
	modelCNNGN = "cnn-gn" // the CNN with a group norm in each block
)

// spartaModels lists the values of SPARTA's model hyperparameter.
var spartaModels = []string{modelViT, modelCNN, modelCNNGN}

// isCNN reports whether model, a value of SPARTA's model hyperparameter,
// is one of the CNNs.
func isCNN(model string) bool { return model == modelCNN || model == modelCNNGN }

// BaseArch returns the architecture of the pretrained base that a run of
// m with the spec's params starts from: the value of m's model
// hyperparameter where params sets it (SPARTA and its baselines: vit or
// cnn, both posed the same image classification tasks), m.Arch()
// otherwise. It is the one place that chooses a run's base.
func BaseArch(m Method, params map[string]any) string {
	if v, ok := params["model"].(string); ok {
		for _, p := range m.Params() {
			if p.Name == "model" {
				return v
			}
		}
	}
	return m.Arch()
}

// spartaClassifier is a model SPARTA fine-tunes.
type spartaClassifier interface {
	nn.Model
	Loss(t *nn.Tape, img []float32, label int, h *nn.Hooks) (*nn.Node, error)
}

// spartaModel returns job.Model as the classifier of the job's model
// hyperparameter, or an error naming the mismatch.
func spartaModel(name string, job *Job) (spartaClassifier, nn.Config, error) {
	if job.Model == nil {
		return nil, nn.Config{}, fmt.Errorf("methods: %s: no model", name)
	}
	want := job.Hyper.String("model")
	arch, cfg := job.Model.Describe()
	if arch == modelCNN && cfg.ConvGroups > 0 {
		arch = modelCNNGN
	}
	m, ok := job.Model.(spartaClassifier)
	if !ok || arch != want {
		return nil, cfg, fmt.Errorf("methods: %s fine-tunes a %s (model = %s), not a %s", name, want, want, arch)
	}
	return m, cfg, nil
}

// newClassifierHead replaces the classifier head of m (a *nn.ViT or
// *nn.CNN), in place, by a new one for classes labels drawn from seed;
// everything before the head is kept.
func newClassifierHead(m spartaClassifier, classes int, seed uint64) error {
	switch m := m.(type) {
	case *nn.ViT:
		return newHead(m, classes, seed)
	case *nn.CNN:
		cfg := m.Config
		cfg.Classes, cfg.Seed = classes, seed
		fresh, err := nn.NewCNN(cfg)
		if err != nil {
			return err
		}
		src, dst := m.Params(), fresh.Params()
		for i, p := range src {
			if p.Kind != nn.KindHead {
				copy(dst[i].Data, p.Data)
			}
		}
		*m = *fresh
		return nil
	}
	arch, _ := m.Describe()
	return fmt.Errorf("no new head for a %s", arch)
}
