// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import "testing"

// TestBaseKeysUnchanged holds the cache keys of the smoke bases that
// existed before the cell forms (Options.CellForm, Plan.CaptionForm) to
// the keys the code before them computed (these hex strings, printed by
// prepare's key at that code): a new option that is off must leave every
// existing base, its folder and the runs on it, as they were. A change
// here means every cached base of that kind is trained again and the
// checked-in runs on it no longer name their base: change the keys only
// with a change that is meant to.
func TestBaseKeysUnchanged(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		desc string
		opt  Options
		key  string
	}{
		{"preset", Options{Scale: "smoke"}, "c5f6569b1169dafd1371b2fde4e4486211a2f579fff3cf0781afedafbf72c1b2"},
		{"scenes", Options{Scale: "smoke", Scenes: true}, "dbb803d5098127017063fcc88374ec3c4604ccb832c73f8c6fbb3b36affce020"},
		{"shapes questions", Options{Scale: "smoke", ShapesQuestions: true}, "338fd1774f2522e6d8667df9bf88877744d61ac4f9bc8ad4ffb6458c7dbf1f27"},
		{"captions", Options{Scale: "smoke", Captions: true}, "bd5930d63d10221fa7e2271829bf0a3bdb11a1ca8fbc9ba399d9b5d1555f6c2d"},
		{"cell captions", Options{Scale: "smoke", CellCaptions: true}, "01b49897385923a756c812988a4175814255ff02f904557eb7902b89ccb76b25"},
		{"cell captions x4 v", Options{Scale: "smoke", CellCaptions: true, CaptionScale: 4, CaptionVision: true}, "51f1ac9ee27bc74f77e228c6dd33ec4b6e2057284cea2d37ef6dd497e7d593d9"},
	} {
		tc.opt.Dir = dir
		p, err := prepare(tc.opt)
		if err != nil {
			t.Fatalf("%s: %v", tc.desc, err)
		}
		if got := p.k.key(); got != tc.key {
			t.Errorf("%s: base key %s, want %s (the key before the cell forms)", tc.desc, got, tc.key)
		}
	}
}
