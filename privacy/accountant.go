// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

// An Accountant adds up the privacy cost of a sequence of events and states
// the resulting (ε, δ) guarantee. The design follows dp_accounting's
// PrivacyAccountant. Accountants are not safe for concurrent use.
type Accountant interface {
	// Compose adds the cost of e applied n times (n ≥ 0). On error the
	// accountant is unchanged.
	Compose(e Event, n int) error
	// Epsilon returns the smallest ε the accountant can certify such that
	// everything composed so far is (ε, delta)-DP; +Inf if there is none.
	Epsilon(delta float64) (float64, error)
	// Delta returns the smallest δ the accountant can certify such that
	// everything composed so far is (epsilon, δ)-DP.
	Delta(epsilon float64) (float64, error)
}
