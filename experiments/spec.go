// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A Spec is a parsed and validated experiment spec. Its fields map 1:1 to
// the YAML keys; see the package documentation for the format.
type Spec struct {
	// FileName is the file the spec was read from (not part of the YAML).
	FileName string `json:"-"`

	Name        string         `json:"name"`
	Description string         `json:"description"`
	Scale       string         `json:"scale"`
	Delta       float64        `json:"delta"`
	Tasks       []string       `json:"tasks"`
	Methods     []Method       `json:"methods"`
	Params      map[string]any `json:"params,omitempty"`
	Sweep       Sweep          `json:"sweep"`
	// Attacks are the names of the spec's attacks, in spec order;
	// AttackOptions the options of those that set any (attacks: [{name:
	// maxrenyi-mia, orders: [inf]}]).
	Attacks       []string                 `json:"attacks,omitempty"`
	AttackOptions map[string]AttackOptions `json:"attack_options,omitempty"`
	Tables        []Table                  `json:"tables,omitempty"`
	Plots         []Plot                   `json:"plots,omitempty"`
	// Claims are the papers' claims that repro verify checks; Regression
	// the thresholds of repro compare (see claims.go).
	Claims     []Claim      `json:"claims,omitempty"`
	Regression []Regression `json:"regression,omitempty"`
}

// A Method is one method of a spec with its own hyperparameters and sweep.
type Method struct {
	Name string `json:"name"`
	// Variant names one configuration of a method that a spec lists more
	// than once (an ablation's rows: dualpriv without Mechanism 1, ...);
	// it becomes the run column variant (VariantParam). "" is the only
	// configuration, and leaves run ids as they were.
	Variant string `json:"variant,omitempty"`
	// Params override the spec's params for this method.
	Params map[string]any `json:"params,omitempty"`
	// Sweep replaces the spec's sweep axes of the same name for this
	// method (for example `epsilon: [inf]` for the non-private baseline).
	Sweep Sweep `json:"sweep,omitzero"`
	// Tasks replaces the spec's tasks for this method when not nil (a
	// model that a spec poses another task than the others).
	Tasks []string `json:"tasks,omitempty"`
}

// TasksOf returns the tasks that s runs method m on: m's own when it
// lists any, the spec's otherwise.
func (s *Spec) TasksOf(m Method) []string {
	if m.Tasks != nil {
		return m.Tasks
	}
	return s.Tasks
}

// VariantParam is the run column, and the key in Config.Params, of a
// method's Variant. It is not a hyperparameter: the executor removes it
// before resolving the method's hyperparameters.
const VariantParam = "variant"

// DataParams are the run params that shape the run's data rather than the
// method: the federated partition of fl-mm (clients, the client count;
// dirichlet_alpha, the concentration α of its Dirichlet label skew) and
// train_holdout (1: the method fine-tunes on the holdout split in place
// of the private one, [Config.TrainHoldout]). The executor
// builds the dataset with them and removes them before resolving the
// method's hyperparameters; specs check them as sweep axes only.
//
// shapes_balanced (1) builds shapes-vqa (and shapes-vqa-tune) with its
// private-side questions' answers balanced within each kind
// (datasets.Options.ShapesBalanced); other tasks ignore it.
var DataParams = []string{"clients", "dirichlet_alpha", "train_holdout", "shapes_balanced"}

// BaseParams are the run params that select the run's pretrained base
// rather than the method: vision_patch, the side of the vision encoder's patches
// in pixels (nn.Config.WithPatch; at small, 4 gives 7×7 = 49 patches an
// image instead of 16, with a base pretrained for it by the same recipe).
// The executor builds or reads the base with them and removes them before
// resolving the method's hyperparameters; specs sweep them as axes, as
// they do DataParams. A run without them has the preset's base, and the
// id it had.
//
// vision_scenes (1) selects the scenes variant of the preset's base, whose
// vision encoder also learnt the colours and shapes of public shapes-vqa
// scene objects (pretrain.Options.Scenes); 0 or absent, the preset's.
//
// shapes_questions (1) selects the shapes-questions variant, whose
// pretraining mixture also holds public shapes-vqa questions of every
// kind (pretrain.Options.ShapesQuestions); 0 or absent, the preset's.
//
// caption_stage (1) selects the captions variant, pretrained with a
// captions-only stage before the mixture (pretrain.Options.Captions,
// LLaVA's feature-alignment stage); 0 or absent, the preset's.
//
// cell_captions (N ≥ 1) selects the cell-captions variant: the
// captions-only stage on cell-first scene captions for N times the
// mixture's steps, the vision encoder trained as well, those captions
// kept in the mixture (pretrain.Options.CellCaptions, CaptionScale N,
// CaptionVision); 0 or absent, the preset's.
//
// cell_form (N ≥ 1, with cell_captions) selects the form of the
// cell-first descriptions, pretrain.CellForms[N] (Options.CellForm): 1
// the cells in a random order, 2 one named cell a sequence, 3 public
// colour-at and shape-at questions, 4 both 2 and 3, 5 both 1 and 3, 6–8
// the forms 2, 4 and 1 on public layouts drawn afresh for every pass
// ("fresh"); 0 or absent, the fixed order.
var BaseParams = []string{"vision_patch", "vision_scenes", "shapes_questions", "caption_stage", "cell_captions", "cell_form"}

// InputParam reports whether name is a data or a base param (DataParams,
// BaseParams): a sweep axis that reaches the run's inputs, not its
// method.
func InputParam(name string) bool {
	return slices.Contains(DataParams, name) || slices.Contains(BaseParams, name)
}

// Patch returns the vision_patch param of c (BaseParams), 0 when it has none
// (the preset's patches).
func (c *Config) Patch() int { return c.intParam("vision_patch") }

// BaseChoice is the pretrained base a run asks for with its base params
// (BaseParams); the zero value is the preset's base.
type BaseChoice struct {
	Patch           int  // vision_patch (Config.Patch)
	Scenes          bool // vision_scenes = 1
	ShapesQuestions bool // shapes_questions = 1
	Captions        bool // caption_stage = 1
	CellCaptions    int  // cell_captions
	CellForm        int  // cell_form
}

// BaseChoice returns the base c's base params (BaseParams) select.
func (c *Config) BaseChoice() BaseChoice {
	return BaseChoice{Patch: c.Patch(), Scenes: c.isOne("vision_scenes"), ShapesQuestions: c.isOne("shapes_questions"), Captions: c.isOne("caption_stage"), CellCaptions: c.intParam("cell_captions"), CellForm: c.intParam("cell_form")}
}

// intParam returns c's integer param name, 0 when it has none.
func (c *Config) intParam(name string) int {
	switch v := c.Params[name].(type) {
	case int64:
		return int(v)
	case float64:
		return int(v)
	case int:
		return v
	}
	return 0
}

// isOne reports whether c's param name is the number 1.
func (c *Config) isOne(name string) bool {
	switch v := c.Params[name].(type) {
	case int64:
		return v == 1
	case float64:
		return v == 1
	case int:
		return v == 1
	}
	return false
}

// TrainHoldout reports whether c's params ask for the chance-level
// control of the extraction attacks (train_holdout = 1): the method
// fine-tunes on the task's holdout split, drawn like the private one
// (the same generator and name lists) but holding none of the private
// records and none of the canaries, while the attacks still target the
// private split. What the attacks find in such a model is what learning
// the task, not memorising its records, gives them.
func (c *Config) TrainHoldout() bool {
	switch v := c.Params["train_holdout"].(type) {
	case int64:
		return v == 1
	case float64:
		return v == 1
	}
	return false
}

// A Partition is the federated partition a run's params ask for, and
// the other options of its data (DataParams) but train_holdout; a zero
// field keeps the task's default.
type Partition struct {
	Clients int
	Alpha   float64
	// ShapesBalanced is shapes_balanced = 1.
	ShapesBalanced bool
}

// Partition returns the partition of c's params (DataParams).
func (c *Config) Partition() Partition {
	var p Partition
	switch v := c.Params["clients"].(type) {
	case int64:
		p.Clients = int(v)
	case float64:
		p.Clients = int(v)
	}
	if v, ok := c.Params["dirichlet_alpha"].(float64); ok {
		p.Alpha = v
	}
	// Only shapes-vqa's tasks read shapes_balanced: the other tasks' data
	// (and data ids) stay as they are with it.
	p.ShapesBalanced = c.isOne("shapes_balanced") && strings.HasPrefix(c.Task, "shapes-vqa")
	return p
}

// A Sweep is a cartesian product over axes, plus zip groups whose axes vary
// together: a zip group of length L is one dimension of L points.
type Sweep struct {
	// Axes holds the values of each swept axis, in the order of [Axes].
	Axes []Axis `json:"axes,omitempty"`
	// Zip holds the paired groups, in spec order.
	Zip [][]Axis `json:"zip,omitempty"`
}

// An Axis is one swept name with its values. Integer axes hold integral
// values; epsilon may hold +Inf.
type Axis struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
}

// Lookup returns the values of the named axis, whether it is a plain axis
// or part of a zip group.
func (s Sweep) Lookup(name string) ([]float64, bool) {
	for _, a := range s.Axes {
		if a.Name == name {
			return a.Values, true
		}
	}
	for _, g := range s.Zip {
		for _, a := range g {
			if a.Name == name {
				return a.Values, true
			}
		}
	}
	return nil, false
}

// names returns the names of every axis of s.
func (s Sweep) names() []string {
	var ns []string
	for _, a := range s.Axes {
		ns = append(ns, a.Name)
	}
	for _, g := range s.Zip {
		for _, a := range g {
			ns = append(ns, a.Name)
		}
	}
	return ns
}

// A Table describes one output table. Rows and Columns name run columns
// (method, task, scale, seed, epsilon_target, or any sweep axis or
// hyperparameter); each cell shows every metric of Metrics as mean ± std
// over seeds.
type Table struct {
	Name    string   `json:"name"`
	Title   string   `json:"title,omitempty"`
	Rows    []string `json:"rows"`
	Columns []string `json:"columns"`
	Metrics []string `json:"metrics"`
	// Pool are run columns whose runs a cell averages per seed before
	// the seeds (a selection table's mean over tasks): each cell is then
	// the mean ± std over seeds of that mean. Neither a row nor a column,
	// nor the seed; nil pools nothing.
	Pool []string `json:"pool,omitempty"`
	// Best is "max" or "min": which value per column is set in bold; ""
	// means no bold.
	Best      string      `json:"best,omitempty"`
	Reference []Reference `json:"reference,omitempty"`
}

// A Reference is a value reported by a paper, shown beside ours in the cell
// that At selects.
type Reference struct {
	// At maps run columns to values (strings or numbers, formatted as
	// in runs.parquet: epsilon_target 1 or "inf").
	At     map[string]string `json:"at"`
	Metric string            `json:"metric"`
	Value  float64           `json:"value"`
	Source string            `json:"source"`
}

// A Plot describes one output plot: Y (a metric) against X (a run column),
// one series per value of Series, one panel per value of Facet (or, when
// the experiment writes it, one file per value of Facet). Kind decides
// which other fields apply; see the package documentation.
type Plot struct {
	Name  string `json:"name"`
	Title string `json:"title,omitempty"`
	// Kind is one of PlotKinds; default line.
	Kind   string `json:"kind"`
	X      string `json:"x,omitempty"`
	Y      string `json:"y,omitempty"`
	Series string `json:"series,omitempty"`
	Facet  string `json:"facet,omitempty"`
	// Band is the error band over seeds: "std", "sem" or "none".
	Band string `json:"band"`
	LogX bool   `json:"logx,omitempty"`
	// Metrics are the spokes of a radar plot, one per metric (three or
	// more); without them a radar's spokes are the values of X.
	Metrics []string `json:"metrics,omitempty"`
	// Rows is the run column down a heatmap's vertical axis (X goes
	// across; Y is the colour).
	Rows string `json:"rows,omitempty"`
	// Attack selects the attack whose per-example scores a roc plot
	// draws; "" draws every attack.
	Attack string `json:"attack,omitempty"`
	// Images are the names of the images a grid plot shows, one column
	// each (images/<name>.png in each run's folder); empty shows every
	// image of the first run.
	Images []string `json:"images,omitempty"`
}

// PlotKinds are the kinds of plot a spec may ask for.
var PlotKinds = []string{"line", "scatter", "bar", "radar", "roc", "heatmap", "grid"}

// Epsilon is a privacy budget ε: positive, or +Inf for no privacy. It
// marshals to JSON as a number, or as the string "inf".
type Epsilon float64

// Inf reports whether ε is +Inf.
func (e Epsilon) Inf() bool { return math.IsInf(float64(e), 1) }

func (e Epsilon) String() string { return FormatFloat(float64(e)) }

// MarshalJSON implements json.Marshaler.
func (e Epsilon) MarshalJSON() ([]byte, error) {
	if e.Inf() {
		return []byte(`"inf"`), nil
	}
	if math.IsNaN(float64(e)) || math.IsInf(float64(e), 0) {
		return nil, fmt.Errorf("experiments: cannot marshal epsilon %v", float64(e))
	}
	return json.Marshal(float64(e))
}

// UnmarshalJSON implements json.Unmarshaler.
func (e *Epsilon) UnmarshalJSON(b []byte) error {
	if string(b) == `"inf"` {
		*e = Epsilon(math.Inf(1))
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("experiments: epsilon: %w", err)
	}
	*e = Epsilon(f)
	return nil
}

// FormatFloat formats f the way specs, ids and tables show it: the
// shortest decimal that reads back as f, and "inf" for +Inf.
func FormatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Names holds the names a spec may use and the checks that tie them
// together. A nil *Names in [Options] means [Registered].
type Names struct {
	Methods []string
	Tasks   []string
	Attacks []string
	Scales  []string
	// CheckParam, when not nil, returns an error if method has no
	// hyperparameter name or v is not a valid value of it. Every param a
	// method receives (its own, the spec's, and every sweep value other
	// than epsilon and seed) is checked, so a misspelt or mistyped one is
	// a file:line error before anything runs.
	CheckParam func(method, name string, v any) error
	// Compatible, when not nil, returns an error if method cannot run
	// task (a method fine-tunes one model architecture; each task is
	// posed to one).
	Compatible func(method, task string) error
	// CheckData, when not nil, returns an error if the value v of the
	// hyperparameter name of method is out of what task's data or the
	// base model allow at scale (DP-MTV's chunk count against the
	// task's private episodes, its shots, its layers). It is called with
	// values CheckParam accepted.
	CheckData func(method, task, scale, name string, v any) error
	// AttackOptions, when not nil, returns the options attack declares
	// (nil: it takes none), so that a spec's attack options are checked
	// at their lines. When it is nil, no attack takes options.
	AttackOptions func(attack string) []AttackOption
	// AttackSets, when not nil, returns the score sets attack computes
	// with options opts (nil: its defaults), the prefixes of its results
	// without the trailing underscore, and owns, which reports whether a
	// metric is a result of a score set the attack computes with some
	// options; owns is nil for an attack without such sets. Tables,
	// plots and claims that name a metric an attack owns but does not
	// compute are errors.
	AttackSets func(attack string, opts AttackOptions) (sets []string, owns func(metric string) bool, err error)
	// Metrics, when not nil, are the names of the metrics and run-table
	// columns that runs record, and Metric reports whether a name is one
	// of them or of a family that attacks name by their options (every
	// membership-inference score's <prefix>_auc, say). A metric that a
	// table, plot or claim names, that Metric does not know and that is
	// not a column of the spec's runs, but is within two edits of a
	// known name, is a misspelling: a file:line error naming the likely
	// metric. Other unknown names pass, since a method may record
	// metrics no list foresees.
	Metrics []string
	Metric  func(name string) bool
	// Effective, when not nil, returns the settings that the params of
	// run c really give where they are coarser than their values, by
	// param name: at scale smoke an image has 4 patches, so Dual-Priv's
	// retention 0.1, 0.2 and 0.3 all keep one patch token ("1 dominant +
	// 0 contextual of 4 patch tokens"). [Spec.Collapses] reads it.
	Effective func(c *Config) map[string]string
	// Steps, when not nil, returns the optimisation steps that run c
	// will take (0 when its method cannot tell before it runs) and the
	// cost class of its method's steps (first-order, zeroth-order, ...),
	// from which the runner predicts how long a sweep has left.
	Steps func(c *Config) (steps int64, class string)
}

var registered struct {
	sync.Mutex
	f func() *Names
}

// RegisterNames makes f the source of [Registered]. The package that joins
// the registries to the runner (runners/pipeline, which sees the methods,
// tasks and attacks packages) calls it from an init function, so that the
// registries are the only lists of names. It panics if called twice.
func RegisterNames(f func() *Names) {
	registered.Lock()
	defer registered.Unlock()
	if registered.f != nil {
		panic("experiments: RegisterNames called twice")
	}
	registered.f = f
}

// Registered returns the names the registries hold now, through the
// function given to [RegisterNames]; before that, no names at all (every
// method, task, attack and scale is unknown).
func Registered() *Names {
	registered.Lock()
	f := registered.f
	registered.Unlock()
	if f == nil {
		return &Names{}
	}
	return f()
}

func has(names []string, s string) bool { return slices.Contains(names, s) }
