// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/registry"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

// A Method fine-tunes a pretrained model on private data.
//
// Adding a method is one file in this package: a type with these methods
// and an init function that registers it. The spec checker, Resolve and the
// pipeline read the method's Arch and Params; nothing else lists methods.
type Method interface {
	// Name returns the method's registry name (nonprivate, dpsgd, ...).
	Name() string
	// Arch returns the architecture of the base model the method
	// fine-tunes: "tinymllm" (the generative tasks), "vit" (image
	// classification) or "fusion" (the federated multimodal classifier).
	// The pipeline gives the job a fresh copy of that base, and a spec
	// may pair the method only with tasks of that architecture.
	Arch() string
	// Params declares the method's hyperparameters: names, kinds,
	// defaults per scale and ranges (see Param).
	Params() []Param
	// FineTune trains job.Model in place and returns what it did. It
	// returns an error for invalid hyperparameters or privacy parameters
	// (before any step), a failing model, or a cancelled ctx.
	FineTune(ctx context.Context, job *Job) (*Result, error)
}

// A DataChecker is a Method some of whose hyperparameters are bounded by
// the task's data or the base model at a scale (DP-MTV's chunk count, its
// shots and layers), so that the spec checker refuses a value out of
// bounds before anything runs. CheckData gets a value of the
// hyperparameter's kind (CheckParam's) and returns an error naming the
// bound, or nil for a name it does not bound.
type DataChecker interface {
	CheckData(task, scale, name string, v any) error
}

// An Effector is a method some of whose hyperparameters act, at a
// preset's scale, more coarsely than their values: Effective returns, by
// hyperparameter name, the setting that h really gives a run of task at
// scale (Dual-Priv's retention becomes a whole number of patch tokens).
// The spec checker warns when a sweep's distinct values give one setting.
type Effector interface {
	Effective(task, scale string, h Hyper) map[string]string
}

// A Job is one fine-tuning task: a fresh copy of a pretrained base and the
// task's data.
type Job struct {
	// Model is the model to fine-tune, of the method's Arch: a
	// *nn.TinyMLLM, *nn.ViT or *nn.Fusion. Its PEFT must be the zero value
	// (a fresh copy of the pretrained base); FineTune adds its own.
	Model nn.Model
	// Data is the task's dataset. The members are Data.Private (canary
	// copies included); methods may also read Data.Public, which is not
	// private. FineTune does not modify it.
	Data *datasets.Dataset
	// Hyper holds the resolved hyperparameters; see Resolve.
	Hyper Hyper
	// Epsilon is the target ε (> 0, or +Inf for no privacy) and Delta the
	// target δ of the run.
	Epsilon, Delta float64
	// Seed seeds every random stream of the run: the sampler, the LoRA
	// initialisation, the DP noise and DPZO's directions each draw from
	// their own stream derived from Seed and a purpose name (Streams).
	Seed uint64
	// Workers is the number of goroutines per step; 0 means GOMAXPROCS.
	// Results do not depend on it.
	Workers int
	// Progress, when not nil, is called after every step with the number
	// of steps done and the total.
	Progress func(done, total int)
}

// A Result is what a fine-tuning run did.
type Result struct {
	// Privacy is the privacy record of the mechanism the run executed
	// (see results.Privacy): accountant, target and achieved ε, δ, σ, q, steps,
	// sampling scheme, neighbouring relation, clip norm, events, caveats.
	Privacy results.Privacy
	// EpsilonRDP and EpsilonPLD are the ε of the executed mechanism under
	// the RDP and the PLD accountant (+Inf for a non-private run);
	// Privacy.Epsilon is the one of Privacy.Accountant.
	EpsilonRDP, EpsilonPLD float64
	// Steps is the number of optimisation steps taken.
	Steps int
	// Metrics are per-step training metrics (loss, batch size, ...).
	Metrics []Metric
	// StepTime is the mean wall time of a step and PeakBytes the largest
	// training state of a step (tapes, per-sample gradients, optimizer
	// moments and model), as nn.Meter measures them.
	StepTime  time.Duration
	PeakBytes int64
	// Warnings are things to show beside the results.
	Warnings []string
	// Visual, when not nil, is the visual-token transform the released
	// model runs with (Dual-Priv's token pruning, without training
	// noise): evaluation and attacks must use it.
	Visual nn.VisualTransform
	// VisualTokens, when not 0, is the number of visual tokens per image
	// that reach the language model.
	VisualTokens float64
	// Values are method-specific results for the run's manifest by name
	// (Rap-FT's partition sizes, clip norms and both ε).
	Values map[string]float64
	// Release, when not nil, is how the method releases one step's
	// update of the trained model (the gradient-inversion attack's threat
	// model, package attacks/gia); nil for a method whose release that
	// attack does not model (Dual-Priv's control rankings).
	Release *Release
	// Pose, when not nil, is how the released system poses an example of
	// the task to the model: DP-MTV answers an in-context episode's query
	// alone (its task vector is in the model's steering), the few-shot
	// baseline after its own demonstrations. Evaluation and the
	// membership attacks see Pose(ex) in place of ex.
	Pose func(ex *datasets.Example) datasets.Example
	// Members and NonMembers, when not nil, replace the private and
	// holdout splits as the membership attacks' examples (before Pose):
	// DP-MTV's are one query per demonstration of its chunks and of the
	// holdout episodes, the labelled images its release could reveal.
	Members, NonMembers []datasets.Example
	// Mean, when not nil, is the method's release of a clipped mean with
	// Gaussian noise (DP-MTV's task vector), which the release audit
	// (package attacks) runs again on neighbouring inputs.
	Mean *MeanRelease
	// Upload, when not nil, is how a client of a federated method uploads
	// (the gradient-inversion attack on uploads, package attacks/gia).
	Upload *FedUpload
}

// A FedUpload is a federated method's client upload at the trained global
// model Model (every tensor in Layout, the upload's coordinates): Upload
// returns what the server receives from a client that holds only ex after
// one local step at batch 1 (the MGIA setting), privatised by the run's
// own mechanism (its clip and σ; the noise of round T + trial of T, a
// stream no training round used), as a gradient: (θ − θ′)/η for a FedAvg
// upload θ′ at local learning rate η, the upload itself under FedSGD.
// Model and Layout are read only.
//
// Round returns what the server receives from a client that holds only ex
// after a whole round as the method takes it: E = Steps local steps at
// batch 1 (the record-level unit: E DP-SGD steps, each clipping the
// example's gradient and adding fresh noise; the client unit: E plain SGD
// steps and the round's delta clipped and noised; FedSGD: one step),
// privatised with the noise of round T + trial as Upload, as the
// pseudo-gradient (θ − θ′)/LR of the local model θ′ (the gradient itself
// under FedSGD, Steps 1). The MINE penalty is absent from both (it needs
// a second example under the client unit).
type FedUpload struct {
	Model  *nn.Fusion
	Layout *nn.Layout
	Upload func(ex *datasets.Example, trial int) ([]float32, error)
	Round  func(ex *datasets.Example, trial int) ([]float32, error)
	// Steps is the local steps E of a round (1 under FedSGD) and LR the
	// clients' local learning rate η.
	Steps int
	LR    float64
}

// A MeanRelease is a release of the mean of per-record vectors, each
// layer slice clipped to ℓ₂ norm Clip, with Gaussian noise: DP-MTV's task
// vector. Release runs the run's mechanism (its clip, σ and noise scale)
// on chunks in place of the run's, with noise drawn from seed;
// Epsilon and Delta are the release's accounted (ε₁, δ) under Relation
// ("zero-out": a record's chunk is present or contributes zero, K
// fixed; "replace-one").
type MeanRelease struct {
	Chunks         [][][]float32 // the run's chunks, [chunk][layer][width]; read only
	Clip           float64
	Epsilon, Delta float64
	Relation       string
	Release        func(chunks [][][]float32, seed uint64) [][]float64
	// Seed is the run's seed: the audit draws its canary and its
	// releases' noise from streams of its own derived from it.
	Seed uint64
}

// A Release is how a method releases the update of one batch: the mean of
// the per-example gradients of the trainable tensors, each clipped by Rule
// (group by group to Rule.C[g]: one group, nn.Flat, for DP-SGD; Rap-FT's
// weak and strong partitions of the trainable coordinates, nn.MaskParts of
// its relevance mask, the Privatizer of its steps), plus Gaussian noise of
// standard deviation Sigmas[g]·Rule.C[g] on group g before the division by
// the batch size, restricted to the ⌈Keep·J⌉ of the J tensors with the
// largest norm (Dual-Priv's Mechanism 2, raw-norm ranking; 0: all). The
// zero value is the raw mean gradient (non-private training). Train, when
// not nil, is the visual-token transform of the training forward pass of
// example i of the released step (Dual-Priv's Mechanism 1 with its fusion
// noise); nil: the transform of Result.Visual. ZO, when not nil, is a
// zeroth-order release (DPZO: one privatised scalar along a public
// direction); the other fields are then unused. Mask, when not nil,
// returns the element mask of the released coordinates over a layout of
// the trained model's trainable tensors (SPARTA's kept rows or elements:
// the other coordinates are left out of every per-example gradient and
// are zero in the release); nil, or a nil mask, releases every
// coordinate.
type Release struct {
	Rule   nn.ClipRule
	Sigmas []float64
	Keep   float64
	Train  func(example int) nn.VisualTransform
	ZO     *ZORelease
	Mask   func(l *nn.Layout) []float32
}

// A Metric is the value of a named training metric at a step.
type Metric struct {
	Step  int
	Name  string
	Value float64
}

var known = registry.New[Method]("methods: method")

// Register adds m to the registry under m.Name(). It is meant to be called
// from init functions; it panics if the name is taken or a ByEpsilon table
// of m's Params is invalid (checkTables: checked here, once per method, so
// that ResolveAt reads the tables unchecked).
func Register(m Method) {
	if err := checkTables(m.Params()); err != nil {
		panic(fmt.Sprintf("methods: %s: %v", m.Name(), err))
	}
	known.Register(m.Name(), m)
}

// Lookup returns the method registered under name.
func Lookup(name string) (Method, bool) { return known.Lookup(name) }

// Names returns the names of the registered methods, sorted.
func Names() []string { return known.Names() }

// Sequence returns ex as a TinyMLLM input: prompt and answer, the loss on
// the answer tokens.
func Sequence(ex *datasets.Example) nn.Sequence {
	s, mask := ex.Sequence()
	return nn.Sequence{Tokens: s, Images: ex.Images, Loss: mask}
}

// lm returns the job's TinyMLLM and its private examples as sequences,
// after checking the job: a method of Arch "tinymllm" calls it first.
func (j *Job) lm(name string) (*nn.TinyMLLM, []nn.Sequence, error) {
	m, ok := j.Model.(*nn.TinyMLLM)
	switch {
	case j.Model == nil:
		return nil, nil, fmt.Errorf("methods: %s: no model", name)
	case !ok:
		arch, _ := j.Model.Describe()
		return nil, nil, fmt.Errorf("methods: %s fine-tunes a tinymllm, not a %s", name, arch)
	case j.Data == nil || len(j.Data.Private) == 0:
		return nil, nil, fmt.Errorf("methods: %s: empty training set", name)
	case !j.Data.Generative:
		return nil, nil, fmt.Errorf("methods: %s: task %s has no answers to generate", name, j.Data.Task)
	case m.Config.PEFT.Method != "" && m.Config.PEFT.Method != "none":
		return nil, nil, fmt.Errorf("methods: %s: the model already has PEFT %q; give a fresh copy of the base", name, m.Config.PEFT.Method)
	}
	if err := checkPrivacy(name, j.Epsilon, j.Delta); err != nil {
		return nil, nil, err
	}
	train := make([]nn.Sequence, len(j.Data.Private))
	for i := range j.Data.Private {
		train[i] = Sequence(&j.Data.Private[i])
		if err := m.Check(&train[i]); err != nil {
			return nil, nil, fmt.Errorf("methods: %s: training example %d: %w", name, i, err)
		}
		if !slices.Contains(train[i].Loss, true) {
			return nil, nil, fmt.Errorf("methods: %s: training example %d has no answer token", name, i)
		}
	}
	return m, train, nil
}

// checkPrivacy returns an error for a target (ε, δ) that no run can have:
// the checks of package privacy (ε = +Inf is no privacy).
func checkPrivacy(name string, eps, delta float64) error {
	if err := privacy.CheckEpsilon(eps); err != nil {
		return fmt.Errorf("methods: %s: %w", name, err)
	}
	if err := privacy.CheckDelta(delta); err != nil {
		return fmt.Errorf("methods: %s: %w", name, err)
	}
	return nil
}
