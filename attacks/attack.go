// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"context"
	"sync"

	"github.com/repro-dp/repro/internal/registry"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/nn"
)

// An Attack attacks a trained model.
type Attack interface {
	// Name returns the attack's registry name (loss-mia, ...).
	Name() string
	// Run attacks t.Model and returns the attack's results. It returns an
	// error for an invalid target or a failing model.
	Run(ctx context.Context, t *Target) (*Report, error)
}

// A Target is what an attack sees: the trained model and the candidate
// examples.
type Target struct {
	// Model is the trained TinyMLLM, or nil when the target is a
	// classifier (Classifier).
	Model *nn.TinyMLLM
	// Classifier, when Model is nil, is the trained image classifier:
	// the membership attacks score each example by the classifier's
	// distribution over the classes (one row, in the desp slice), the
	// gradient-inversion attack inverts its released update. Example.Label
	// is each example's class.
	Classifier Classifier
	// Fusion, when Model and Classifier are nil, is the trained
	// classifier of (image, caption) pairs (nn.Fusion, the federated
	// methods' model): the membership attacks score each example as for
	// Classifier, the pair being Seq.Images[0] and the caption
	// Seq.Tokens.
	Fusion PairClassifier
	// Visual, when not nil, is the visual-token transform the model runs
	// with (the method's, e.g. Dual-Priv's token pruning).
	Visual nn.VisualTransform
	// Members are training examples (private train) and NonMembers
	// examples from the same distribution never trained on (holdout).
	// They need not be equally many; more non-members resolve lower FPRs.
	Members, NonMembers []Example
	// TPRBound, when not nil, returns the largest true-positive rate any
	// membership attack can reach at a false-positive rate against the
	// mechanism that trained the model (privacy.PLD.TPR). Attacks compare
	// their TPR with it and report a violation when they exceed it beyond
	// sampling error (MembershipAlpha).
	TPRBound func(fpr float64) (float64, error)
	// Orders are the Rényi orders whose entropies the shared forward
	// passes compute, so that MaxRenyiMIA with those orders (RenyiOrders
	// or a spec's `orders` option) needs no second pass when another
	// attack runs first; nil computes none until an attack asks. Results
	// do not depend on it.
	Orders []float64
	// Workers is the number of goroutines; 0 means GOMAXPROCS. Results do
	// not depend on it.
	Workers int
	// Decode, when not nil, turns token ids into text (the zlib score
	// compresses it); nil compresses the ids as decimal words.
	Decode func(ids []int) string
	// Secrets are the secret canaries of a generative task, for
	// CanaryExposure; PII, when not nil, is the task's personal data, for
	// PIIExtraction and PIIReconstruction.
	Secrets []Secret
	PII     *PIIData
	// Base, when not nil, is the model the target was fine-tuned from:
	// the control of the extraction attacks, which never saw the private
	// data. Attacks only read it.
	Base *nn.TinyMLLM
	// Canaries are the audit canaries of the run (AuditOneRun): each was
	// drawn before training and inserted into the training set with
	// probability ½.
	Canaries []Canary
	// Epsilon and Delta are the run's accounted ε (0 or +Inf: none) and δ,
	// which audits check.
	Epsilon, Delta float64
	// Planted marks a planted under-noised control run (its privacy record
	// says so): a failed bound check or audit is then the expected outcome,
	// recorded as a result and a warning rather than an error.
	Planted bool
	// Release, when not nil, is how the method that trained the model
	// releases one step's update: what the gradient-inversion attack
	// (package attacks/gia) sees. nil: the method's release is not
	// modelled, and that attack fails. Train nil means Visual.
	Release *methods.Release
	// Mean, when not nil, is the run's release of a clipped mean with
	// Gaussian noise (DP-MTV's task vector), which MeanAudit runs again.
	Mean *methods.MeanRelease
	// Public are public examples of the task (never trained on privately):
	// the gradient-inversion attacker's own data, for its image prior and
	// its data-independent baseline.
	Public []Example
	// Pool marks a target whose examples come from a fixed LiRA pool
	// shared by the runs of its configuration at every seed (the -lira
	// tasks): Members and NonMembers are the pool examples the run trained
	// on and the others, each Example.ID its index in the pool.
	Pool bool

	// mu guards passes, the forward passes shared by the attacks run on
	// the Target (one after another); a Target must not be copied.
	mu     sync.Mutex
	passes *passSet
}

// A Canary is an audit canary: an example and whether it was inserted
// into the training set.
type Canary struct {
	Example
	In bool
}

// An Example is a candidate example with an id that is stable within its
// split (the pipeline uses the example's index in its split). For a
// classifier target, Seq.Images[0] is the image and Label its class; for
// a pair classifier (Target.Fusion), Seq.Tokens is also the caption.
type Example struct {
	ID    int64
	Seq   nn.Sequence
	Label int
}

// A Classifier is an image classifier an attack can query and
// differentiate: nn.ViT, or any model (a CNN) with the same methods.
// Describe's Config gives the image shape (Channels, ImageSize) and the
// number of classes.
type Classifier interface {
	nn.Model
	// Logits returns the class logits of one image, shape [1, classes],
	// and the image's node on t (whose Grad holds the input gradient
	// after Backward when needGrad is set).
	Logits(t *nn.Tape, img []float32, needGrad bool, h *nn.Hooks) (logits, input *nn.Node, err error)
}

var _ Classifier = (*nn.ViT)(nil)

// A PairClassifier classifies an (image, caption) pair: nn.Fusion.
type PairClassifier interface {
	nn.Model
	// Logits returns the class logits of one pair, shape [1, classes],
	// and the image's node on t.
	Logits(t *nn.Tape, img []float32, tokens []int, needGrad bool, h *nn.Hooks) (logits, input *nn.Node, err error)
}

var _ PairClassifier = (*nn.Fusion)(nil)

// A Report holds an attack's results.
type Report struct {
	// Results are the attack's final numbers by name, prefixed by the
	// attack (mia_auc, ...): columns of runs.parquet.
	Results map[string]float64
	// Scores are the per-example scores (higher: more likely a member),
	// for scores.parquet.
	Scores []results.Score
	// Warnings are findings to show beside the results, such as a target
	// FPR that needs more non-members than the split has.
	Warnings []string
	// Images are PNG files by name ([a-z0-9][a-z0-9_.-]*, without .png),
	// which the pipeline writes to the run's folder as
	// ImagesDir/<name>.png: originals and reconstructions, for the grid
	// plot kind.
	Images map[string][]byte
	// Violations are failed checks of the privacy guarantee: a TPR above
	// the accountant's bound (Membership) or an audit lower bound above
	// the accounted ε (AuditOneRun). The pipeline fails a run that has
	// any, unless it is a planted control.
	Violations []string
}

// ImagesDir is the folder of a run's folder where the pipeline writes the
// attacks' Report.Images, the folder the grid plot kind reads
// (reports.ImagesDir; a test keeps them equal).
const ImagesDir = "images"

var known = registry.New[Attack]("attacks: attack")

// Register adds a to the registry under a.Name(). It is meant to be called
// from init functions; it panics if the name is taken.
func Register(a Attack) { known.Register(a.Name(), a) }

// Lookup returns the attack registered under name.
func Lookup(name string) (Attack, bool) { return known.Lookup(name) }

// Names returns the names of the registered attacks, sorted.
func Names() []string { return known.Names() }
