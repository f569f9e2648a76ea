// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package specout

import (
	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/reports"
)

// ClaimsOf returns the reports claims that the claims of spec s describe.
func ClaimsOf(s *experiments.Spec) []reports.Claim {
	out := make([]reports.Claim, 0, len(s.Claims))
	for _, c := range s.Claims {
		rc := reports.Claim{
			Name: c.Name, Text: c.Text, Metric: c.Metric, A: c.A, B: c.B, X1: c.X1, X2: c.X2, Each: c.Each,
			Expect: c.Expect, Value: c.Value, Tolerance: c.Tolerance, MinEffect: c.MinEffect,
			MinSeeds: c.MinSeeds, Test: c.Test, Scale: c.Scale, Required: c.Required, Source: c.Source,
			Premise: c.Premise, Gate: c.Gate,
		}
		for _, p := range c.Paper {
			rc.Paper = append(rc.Paper, reports.PaperValue{At: p.At, A: p.A, B: p.B, A2: p.A2, B2: p.B2})
		}
		out = append(out, rc)
	}
	return out
}

// ThresholdsOf returns the regression thresholds of spec s by metric.
func ThresholdsOf(s *experiments.Spec) map[string]reports.Threshold {
	out := make(map[string]reports.Threshold, len(s.Regression))
	for _, r := range s.Regression {
		out[r.Metric] = reports.Threshold{Better: r.Better, Threshold: r.Threshold}
	}
	return out
}
