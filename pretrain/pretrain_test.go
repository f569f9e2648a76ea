// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/repro-dp/repro/datasets"
)

// tinyPlan is a few-step recipe at smoke scale for the tests of the cache,
// the lock and reproducibility, which do not need a good model.
func tinyPlan() *Plan {
	p := plans[datasets.Smoke]
	p.Steps, p.Warmup, p.Eval, p.VisionSteps = 6, 2, 12, 3
	p.FineTune.Steps = 2
	return &p
}

func TestCacheHitAndFresh(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	opt := Options{Scale: "smoke", Dir: dir, plan: tinyPlan()}
	r1, err := Base(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Cached {
		t.Errorf("first build reported as cached")
	}
	if r1.TinyMLLM() == nil {
		t.Fatalf("model is %T, want *nn.TinyMLLM", r1.Model)
	}
	r2, err := Base(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !r2.Cached || r2.Hash != r1.Hash || r2.Checkpoint != r1.Checkpoint {
		t.Errorf("second call: cached %v hash %.12s at %s, want cached hash %.12s at %s", r2.Cached, r2.Hash, r2.Checkpoint, r1.Hash, r1.Checkpoint)
	}
	opt.Fresh = true
	r3, err := Base(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if r3.Cached || r3.Hash != r1.Hash {
		t.Errorf("fresh rebuild: cached %v hash %.12s, want a rebuild with hash %.12s", r3.Cached, r3.Hash, r1.Hash)
	}
	// A damaged checkpoint is not served: it is rebuilt.
	if err := os.WriteFile(r1.Checkpoint, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt.Fresh = false
	r4, err := Base(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if r4.Cached || r4.Hash != r1.Hash {
		t.Errorf("after damage: cached %v hash %.12s, want a rebuild with hash %.12s", r4.Cached, r4.Hash, r1.Hash)
	}
	if _, err := ReadManifest(filepath.Dir(r1.Checkpoint)); err != nil {
		t.Error(err)
	}
}

// TestConcurrent asks for the same base from two goroutines: it must be
// built once, and both get the same checkpoint.
func TestConcurrent(t *testing.T) {
	dir := t.TempDir()
	opt := Options{Scale: "smoke", Dir: dir, plan: tinyPlan()}
	var wg sync.WaitGroup
	res := make([]*Result, 2)
	errs := make([]error, 2)
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = Base(context.Background(), opt)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if res[0].Hash != res[1].Hash {
		t.Errorf("hashes differ: %.12s and %.12s", res[0].Hash, res[1].Hash)
	}
	if res[0].Cached == res[1].Cached {
		t.Errorf("cached = %v and %v, want exactly one build", res[0].Cached, res[1].Cached)
	}
}
