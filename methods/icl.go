// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package methods

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/privacy"
)

func init() {
	Register(ZeroShot{})
	Register(FewShot{})
}

// ZeroShot is DP-MTV's lower reference: the base model answers each
// in-context episode's query alone, with no demonstration and no task
// vector. It reads no private record.
type ZeroShot struct{}

// Name implements Method.
func (ZeroShot) Name() string { return "zeroshot" }

// Arch implements Method.
func (ZeroShot) Arch() string { return "tinymllm" }

// Params implements Method: the chunk count and shots only say which
// private queries the membership attacks call members (the same as
// DP-MTV's at those values), as a control that nothing leaks;
// query_shots keeps demonstrations of a test episode's own (n-shot
// in-context learning without a task vector).
func (ZeroShot) Params() []Param { return mtvParams()[:3] }

// FineTune implements Method. The job's ε must be +Inf: there is no
// mechanism to calibrate (the record says that no private record is
// read: ε = 0).
func (ZeroShot) FineTune(_ context.Context, job *Job) (*Result, error) {
	const name = "zeroshot"
	if !math.IsInf(job.Epsilon, 1) {
		return nil, fmt.Errorf("methods: %s: target ε = %v: the zero-shot baseline runs at ε = inf only", name, job.Epsilon)
	}
	s, err := icl(name, job)
	if err != nil {
		return nil, err
	}
	K := job.Hyper.Int("chunks")
	if K == 0 || K > len(s.order) {
		K = len(s.order)
	}
	ev, err := privacy.MarshalEvent(privacy.Composed{})
	if err != nil {
		return nil, err
	}
	res := &Result{Pose: queryPose(job.Hyper.Int("query_shots")), EpsilonRDP: 0, EpsilonPLD: 0,
		Privacy: results.Privacy{Accountant: "none", EpsilonTarget: results.Float(job.Epsilon), Epsilon: 0,
			Delta: job.Delta, Sampling: "none", Neighbouring: "zero-out", Events: json.RawMessage(ev),
			Caveats: []string{"reads no private record: the members the attacks test were never used"}}}
	res.Members, res.NonMembers = demoQueries(job.Data.Private, s.order[:K], s.shots), demoQueries(job.Data.Holdout, nil, s.shots)
	return res, nil
}

// checkICLData bounds the in-context methods' hyperparameters by task's
// data and the base model at scale: the chunk count and the private
// validation episodes by the private episodes, the shots by an
// episode's, the layers by the model's blocks. Tasks that are not
// in-context are left to FineTune's error.
func checkICLData(task, scale, name string, v any) error {
	sc, err := datasets.ParseScale(scale)
	if err != nil {
		return err
	}
	if task != "icl" {
		return nil
	}
	sz, err := datasets.TaskSizes(task, sc)
	if err != nil {
		return err
	}
	switch name {
	case "chunks", "val_records":
		if n := v.(int); n > sz.Private {
			return fmt.Errorf("%d episodes asked, the task has %d private episodes", n, sz.Private)
		}
	case "shots", "query_shots":
		if n, have := v.(int), datasets.ICLShots(sc); n > have {
			return fmt.Errorf("%d demonstrations asked, an episode has %d", n, have)
		}
	case "layers":
		cfg, err := nn.Preset(string(sc), datasets.Vocab().Len())
		if err != nil {
			return err
		}
		if _, err := parseLayers(v.([]string), cfg.Layers); err != nil {
			return err
		}
	}
	return nil
}

// CheckData implements DataChecker.
func (ZeroShot) CheckData(task, scale, name string, v any) error {
	return checkICLData(task, scale, name, v)
}

// CheckData implements DataChecker.
func (FewShot) CheckData(task, scale, name string, v any) error {
	return checkICLData(task, scale, name, v)
}

// FewShot is N-shot in-context learning with private demonstrations in
// the prompt, DP-MTV's non-private upper reference and the membership
// attacks' control: the first private episode of the partition (its N
// demonstrations and its query, with their words) is placed before every
// query. It has no guarantee; its members are those N+1 labelled images,
// whose words the model can copy from its context (Wen et al., "Membership
// Inference Attacks Against In-Context Learning", CCS 2024; Duan et al.,
// "On the Privacy Risk of In-context Learning", 2023).
type FewShot struct{}

// Name implements Method.
func (FewShot) Name() string { return "fewshot" }

// Arch implements Method.
func (FewShot) Arch() string { return "tinymllm" }

// Params implements Method: the demonstrations per prompt (shots).
func (FewShot) Params() []Param { return mtvParams()[1:2] }

// FineTune implements Method. The job's ε must be +Inf.
func (FewShot) FineTune(_ context.Context, job *Job) (*Result, error) {
	const name = "fewshot"
	if !math.IsInf(job.Epsilon, 1) {
		return nil, fmt.Errorf("methods: %s: target ε = %v: the few-shot baseline runs at ε = inf only", name, job.Epsilon)
	}
	s, err := icl(name, job)
	if err != nil {
		return nil, err
	}
	demo := datasets.FirstShots(&job.Data.Private[s.order[0]], s.shots)
	toks, imgs := datasets.Prefix(&demo)
	pose := func(ex *datasets.Example) datasets.Example {
		q := *ex
		if _, err := datasets.EpisodeShots(ex); err == nil && len(ex.Images) > 1 {
			q = datasets.ZeroShot(ex)
		}
		q.Prompt = append(slices.Clone(toks), q.Prompt[1:]...)
		q.Images = append(slices.Clone(imgs), q.Images...)
		return q
	}
	probe := pose(&demo)
	seq := Sequence(&probe)
	if err := s.m.Check(&seq); err != nil {
		return nil, fmt.Errorf("methods: %s: %w", name, err)
	}
	if n := len(seq.Tokens) + len(seq.Images)*s.m.Config.Patches(); n > s.m.Config.MaxLen {
		return nil, fmt.Errorf("methods: %s: %d demonstrations and a query take %d positions, the model holds %d; ask for fewer shots", name, s.shots+1, n, s.m.Config.MaxLen)
	}
	a, err := nonPrivateAccounting(job.Epsilon, job.Delta, 1, 1)
	if err != nil {
		return nil, err
	}
	a.Record.Sampling = "none"
	a.Record.Caveats = append(a.Record.Caveats, "the demonstrations of one private episode are in every prompt: no guarantee")
	res := &Result{Pose: pose, Privacy: a.Record, EpsilonRDP: a.EpsilonRDP, EpsilonPLD: a.EpsilonPLD}
	res.Members = datasets.Queries(&demo)
	res.NonMembers = demoQueries(job.Data.Holdout, nil, s.shots)
	return res, nil
}
