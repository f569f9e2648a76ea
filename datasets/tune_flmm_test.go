// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"testing"
)

// TestTuneFLMM checks fl-mm-tune: private train and validation are fl-mm's
// public examples (same caption and label), split by whether pretraining
// held their item out, none of them an item of a private-side split of
// fl-mm; every client has private data, validation has none; no holdout,
// no canaries.
func TestTuneFLMM(t *testing.T) {
	t.Parallel()
	d, base := smoke(t, "fl-mm-tune", 0), smoke(t, "fl-mm", 0)
	if len(d.Holdout)+len(d.Canaries) != 0 || len(d.Test) == 0 || len(d.Private)+len(d.Test) != len(base.Public) {
		t.Fatalf("private %d, test %d, holdout %d, canaries %d; want %d public examples split into private and test only",
			len(d.Private), len(d.Test), len(d.Holdout), len(d.Canaries), len(base.Public))
	}
	public := map[string]*Example{}
	for i := range base.Public {
		public[base.Public[i].Items[0]] = &base.Public[i]
	}
	for _, split := range privateSide {
		for _, ex := range base.Split(split) {
			for _, it := range ex.Items {
				delete(public, it)
			}
		}
	}
	perClient := make([]int, d.Clients)
	for _, split := range []string{"private", "test"} {
		for i, ex := range d.Split(split) {
			where := fmt.Sprintf("%s %d", split, i)
			p := public[ex.Items[0]]
			switch {
			case p == nil:
				t.Fatalf("%s: item %s is not a public-only item of fl-mm", where, ex.Items[0])
			case p.Label != ex.Label || fmt.Sprint(p.Prompt) != fmt.Sprint(ex.Prompt):
				t.Fatalf("%s: label or caption differ from the public example's", where)
			case PretrainHeldOut(ex.Items) != (split == "test"):
				t.Fatalf("%s: held out of pretraining %v", where, PretrainHeldOut(ex.Items))
			case split == "test" && ex.Client != -1:
				t.Fatalf("%s: validation example on client %d", where, ex.Client)
			case split == "private" && (ex.Client < 0 || ex.Client >= d.Clients):
				t.Fatalf("%s: client %d outside [0, %d)", where, ex.Client, d.Clients)
			case split == "private":
				perClient[ex.Client]++
			}
		}
	}
	for k, n := range perClient {
		if n == 0 {
			t.Errorf("client %d has no data", k)
		}
	}
	t.Logf("private %d, validation %d, per client %v", len(d.Private), len(d.Test), perClient)
}
