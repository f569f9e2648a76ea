// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

// Error is a programmer error reported by a panic: a shape mismatch or a
// misuse of the API in hot numeric code. Input and configuration errors are
// returned as ordinary errors instead.
type Error struct{ string }

func (e Error) Error() string { return e.string }

// Panic messages.
var (
	errShape       = Error{"nn: dimension mismatch"}
	errLength      = Error{"nn: slice length mismatch"}
	errNegativeDim = Error{"nn: negative dimension"}
	errHeads       = Error{"nn: width not divisible by the number of heads"}
	errTapeDone    = Error{"nn: backward called twice on a tape"}
	errNotScalar   = Error{"nn: backward from a non-scalar node"}
	errIndex       = Error{"nn: index out of range"}
	errLayout      = Error{"nn: gradient vector does not match the layout"}
	errBatchParam  = Error{"nn: a batched tape's trainable parameter used outside Affine"}
	errGathered    = Error{"nn: a parameter of gathered rows used outside Affine and Conv2d, or on a batched tape"}
	errClip        = Error{"nn: bad clip rule"}
)
