// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package specout

import "github.com/repro-dp/repro/experiments"

// The tests of this package run without the registries (runners/pipeline joins
// them to the spec checker): they register these fixed names, which accept
// every param.
func init() {
	experiments.RegisterNames(func() *experiments.Names {
		return &experiments.Names{
			Methods: []string{"nonprivate", "dpsgd", "dpzo", "dualpriv", "rapft"},
			Tasks:   []string{"fashion-vqa", "shapes-vqa", "fashion-cls", "records", "records-e2e", "records-echr", "icl", "fl-mm"},
			Attacks: []string{"loss-mia"},
			Scales:  []string{"smoke", "small", "full"},
		}
	})
}
