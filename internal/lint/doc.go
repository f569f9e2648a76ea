// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// Package lint provides repository-wide checks of the code itself, run as
// tests: no non-test function longer than MaxFuncLines lines, and no
// product the compiler may fuse into a fused multiply-add on the results'
// path (the module built for arm64 and its assembly listing searched;
// docs/engine.md).
package lint

// MaxFuncLines is the longest a non-test function may be, from its
// signature to its closing brace.
const MaxFuncLines = 100
