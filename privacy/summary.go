// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"errors"
	"fmt"
	"math"
)

// Summary is the privacy record of a mechanism at one δ: its ε by both
// accountants, as every run records it.
type Summary struct {
	Event    Event
	Relation Relation
	Delta    float64
	// EpsilonRDP and RDPOrder are the RDP accountant's ε and optimal order;
	// EpsilonRDP is +Inf (with a warning) if RDP does not support the event,
	// and RDPOrder is NaN when EpsilonRDP is +Inf.
	EpsilonRDP, RDPOrder float64
	// EpsilonPLD is the tight accountant's ε, an upper bound on the true ε,
	// and EpsilonPLDLower a lower bound on it (PLD.EpsilonBounds).
	EpsilonPLD, EpsilonPLDLower float64
	// PLDInterval is the grid spacing used: 1e-4, or 1e-3, 1e-2 or 0.1 when the
	// loss range is too wide for the default grid (with a warning).
	PLDInterval float64
	// Warnings are findings to show with the result.
	Warnings []error
}

// Summarize accounts for e composed once under relation rel by both
// accountants and returns their ε at delta. It returns an error if the
// parameters are invalid, or the PLD accountant cannot handle e on any grid.
func Summarize(e Event, delta float64, rel Relation) (Summary, error) {
	s := Summary{Event: e, Relation: rel, Delta: delta, RDPOrder: math.NaN()}
	if err := CheckDelta(delta); err != nil {
		return s, err
	}
	r, err := NewRDP(&RDPOptions{Relation: rel})
	if err != nil {
		return s, err
	}
	if err := r.Compose(e, 1); err != nil {
		if e == nil || e.check() != nil {
			return s, err
		}
		s.EpsilonRDP = math.Inf(1)
		s.Warnings = append(s.Warnings, fmt.Errorf("privacy: no RDP bound: %w", err))
	} else {
		g, err := r.EpsilonOrder(delta)
		if err != nil {
			return s, err
		}
		s.EpsilonRDP, s.RDPOrder = g.Epsilon, g.Order
		s.Warnings = append(s.Warnings, g.Warnings...)
	}
	for i, h := range []float64{1e-4, 1e-3, 1e-2, 0.1} {
		p, err := NewPLD(&PLDOptions{Interval: h, Relation: rel})
		if err != nil {
			return s, err
		}
		err = p.Compose(e, 1)
		if errors.Is(err, ErrGridTooLarge) {
			continue
		}
		if err != nil {
			return s, err
		}
		if s.EpsilonPLDLower, s.EpsilonPLD, err = p.EpsilonBounds(delta); err != nil {
			return s, err
		}
		s.PLDInterval = h
		if i > 0 {
			s.Warnings = append(s.Warnings, fmt.Errorf("privacy: the loss range is wide: PLD grid interval raised to %g (ε stays an upper bound; the error bound is looser)", h))
		}
		return s, nil
	}
	return s, fmt.Errorf("privacy: no PLD grid holds %v: %w", e, ErrGridTooLarge)
}
