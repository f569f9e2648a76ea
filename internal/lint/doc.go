// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package lint provides repository-wide checks of the code itself, run as
// tests: no non-test function longer than MaxFuncLines lines.
package lint

// MaxFuncLines is the longest a non-test function may be, from its
// signature to its closing brace.
const MaxFuncLines = 100
