// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !unix

package nn

import "time"

// processCPU reports that CPU time is not available here.
func processCPU() (time.Duration, bool) { return 0, false }
