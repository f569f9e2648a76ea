// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package experiments

import (
	"fmt"

	"github.com/repro-dp/repro/privacy"
)

// A SyntaxError is an error in a spec: a YAML syntax error, an unknown key,
// a value of the wrong type or out of range. It prints as "file:line: msg",
// or "file: msg" when Line is 0. For an error in a `--set` override,
// FileName is the override as given ("--set delta=2") and Line is 0.
type SyntaxError struct {
	FileName string
	Line     int
	Msg      string
}

func (e *SyntaxError) Error() string {
	if e.Line <= 0 {
		return fmt.Sprintf("%s: %s", e.FileName, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.FileName, e.Line, e.Msg)
}

// CheckEpsilon returns an error unless ε > 0; ε = +Inf (no privacy) is
// allowed. NaN is rejected. The rule is privacy.CheckEpsilon's; the message
// uses the spec's spelling (inf).
func CheckEpsilon(eps float64) error {
	if privacy.CheckEpsilon(eps) != nil {
		return fmt.Errorf("epsilon is %v, must be > 0 or inf", eps)
	}
	return nil
}

// CheckDelta returns an error unless 0 ≤ δ < 1. NaN and ±Inf are rejected.
// The rule is privacy.CheckDelta's.
func CheckDelta(delta float64) error {
	if privacy.CheckDelta(delta) != nil {
		return fmt.Errorf("delta is %v, must be in [0, 1)", delta)
	}
	return nil
}
