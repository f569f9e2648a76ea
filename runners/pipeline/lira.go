// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/methods"
	"github.com/repro-dp/repro/runners"
)

func init() { runners.RegisterAnalysis(liraAnalysis) }

// liraCanary is the pool index of the -lira tasks' mislabelled canary,
// which the multi-run audit targets (datasets.liraBuilder).
const liraCanary = 0

// liraAnalysis is the experiment-level half of the lira-mia attack: the
// finished runs with lira-mia are grouped by configuration (everything but
// the seed), and in each group of at least three every run is attacked by
// LiRA with the others as its shadow models (attacks.LiRAGroup, checked
// against the PLD bound of the run's mechanism), and the group is audited
// over its runs on the pool's canary (attacks.AuditRuns), the results
// added to each run's row:
//
//   - lira_online_*, lira_offline_*, lira_online_pe_*: the metrics of
//     LiRA's scores (attacks.MembershipAlpha), lira_shadows, lira_undefined;
//   - lira_pooled_online_*, lira_pooled_offline_*, lira_pooled_online_pe_*:
//     the metrics of one ROC over the scores of every run of the group as
//     target (attacks.LiRAPooled), the same in every row of the group;
//   - audit_runs_epsilon_lb, audit_runs_pass, audit_runs_in, audit_runs_out,
//     audit_runs_tp, audit_runs_fp: the multi-run audit, the same in every
//     row of the group.
//
// A violated bound or a failed audit is an error, except for a planted
// under-noised control, whose rows still record it.
func liraAnalysis(runs []*runners.Run, rows []results.Run) error {
	groups := map[string][]int{}
	var keys []string
	for i, r := range runs {
		if rows[i].Status != results.OK || !slices.Contains(r.Config.Attacks, "lira-mia") {
			continue
		}
		c := r.Config
		c.Seed = 0
		k := c.ID(experiments.Inputs{})
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	var errs []error
	for _, k := range keys {
		if err := liraGroup(runs, rows, groups[k]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// liraGroup runs LiRA and the multi-run audit on the runs idx of one
// configuration.
func liraGroup(runs []*runners.Run, rows []results.Run, idx []int) error {
	if len(idx) < 3 {
		return nil // too few shadows: the runs keep their per-run results
	}
	models := make([]attacks.LiRAModel, len(idx))
	privs := make([]*results.Privacy, len(idx))
	for j, i := range idx {
		m, priv, err := liraModel(runs[i].Dir)
		if err != nil {
			return fmt.Errorf("pipeline: LiRA: run %s: %w", runs[i].ID, err)
		}
		if j > 0 && len(m.Conf) != len(models[0].Conf) {
			return fmt.Errorf("pipeline: LiRA: run %s scored a pool of %d examples, run %s one of %d", runs[i].ID, len(m.Conf), runs[idx[0]].ID, len(models[0].Conf))
		}
		models[j], privs[j] = m, priv
	}
	var errs []error
	for j, i := range idx {
		var bound func(float64) (float64, error)
		if p := privs[j]; p != nil && p.Sigma > 0 {
			var err error
			if bound, err = tprBound(*p); err != nil {
				return err
			}
		}
		rep := &attacks.Report{Results: rows[i].Results}
		if rows[i].Results == nil {
			rows[i].Results = map[string]float64{}
			rep.Results = rows[i].Results
		}
		if err := attacks.LiRAGroup(rep, models, j, bound); err != nil {
			return fmt.Errorf("pipeline: LiRA: run %s: %w", runs[i].ID, err)
		}
		for _, v := range rep.Violations {
			if !planted(privs[j]) {
				errs = append(errs, fmt.Errorf("pipeline: run %s: %s", runs[i].ID, v))
			}
		}
	}
	pooled := &attacks.Report{}
	if err := attacks.LiRAPooled(pooled, models); err != nil {
		return fmt.Errorf("pipeline: LiRA over the %d runs of %s: %w", len(idx), runs[idx[0]].Config.Method, err)
	}
	for _, i := range idx {
		maps.Copy(rows[i].Results, pooled.Results)
	}
	if err := auditGroup(runs, rows, idx, models, privs); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// auditGroup audits the runs idx on the pool's canary and records the
// outcome in each of their rows.
func auditGroup(runs []*runners.Run, rows []results.Run, idx []int, models []attacks.LiRAModel, privs []*results.Privacy) error {
	conf, in := make([]float64, len(models)), make([]bool, len(models))
	for j, m := range models {
		if len(m.Conf) <= liraCanary || math.IsNaN(m.Conf[liraCanary]) {
			return nil
		}
		conf[j], in[j] = m.Conf[liraCanary], m.In[liraCanary]
	}
	if !slices.Contains(in, true) || !slices.Contains(in, false) {
		return nil // every run trained with (or without) the canary
	}
	eps, delta := math.Inf(1), rows[idx[0]].Delta
	if p := privs[0]; p != nil && p.Sigma > 0 {
		eps = float64(p.Epsilon)
	}
	a := attacks.AuditRuns(conf, in, eps, delta)
	for _, i := range idx {
		r := rows[i].Results
		r["audit_runs_epsilon_lb"], r["audit_runs_pass"] = a.Lower, b2f(a.Pass)
		r["audit_runs_in"], r["audit_runs_out"] = float64(a.In), float64(a.Out)
		r["audit_runs_tp"], r["audit_runs_fp"] = float64(a.TruePos), float64(a.FalsePos)
	}
	if !a.Pass && !planted(privs[0]) {
		return fmt.Errorf("pipeline: the multi-run audit of %s over %d runs (%d of %d with the canary guessed in, %d of %d without) bounds ε below by %.3g, above the accounted %.3g: the privacy guarantee does not hold", runs[idx[0]].Config.Method, len(idx), a.TruePos, a.In, a.FalsePos, a.Out, a.Lower, eps)
	}
	return nil
}

// liraModel reads a run's LiRA confidences from its scores.parquet and
// its privacy record from its manifest.
func liraModel(dir string) (attacks.LiRAModel, *results.Privacy, error) {
	man, err := results.ReadManifest(dir)
	if err != nil {
		return attacks.LiRAModel{}, nil, err
	}
	scores, err := results.ReadScores(filepath.Join(dir, results.ScoresFile))
	if err != nil {
		return attacks.LiRAModel{}, nil, err
	}
	n := int64(0)
	for _, s := range scores {
		if s.Attack == attacks.LiRAConfLabel {
			n = max(n, s.ExampleID+1)
		}
	}
	if n == 0 {
		return attacks.LiRAModel{}, nil, fmt.Errorf("no %s scores in %s", attacks.LiRAConfLabel, results.ScoresFile)
	}
	m := attacks.LiRAModel{Conf: make([]float64, n), In: make([]bool, n)}
	for i := range m.Conf {
		m.Conf[i] = math.NaN()
	}
	for _, s := range scores {
		if s.Attack == attacks.LiRAConfLabel {
			m.Conf[s.ExampleID], m.In[s.ExampleID] = s.Score, s.Member
		}
	}
	return m, man.Privacy, nil
}

// planted reports whether the privacy record p is a planted under-noised
// control's.
func planted(p *results.Privacy) bool {
	return p != nil && slices.ContainsFunc(p.Caveats, func(c string) bool { return strings.HasPrefix(c, methods.PlantedCaveat) })
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
