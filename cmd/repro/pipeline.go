// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

// The run lifecycle: importing it registers the executor of every method
// (base → fine-tune → evaluation → attacks → record) and the runs' inputs
// (data fingerprint, base checkpoint hash) with the runners.
import _ "github.com/repro-dp/repro/runners/pipeline"
