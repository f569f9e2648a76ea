// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"slices"
	"testing"
)

// TestEpisodeParts checks ZeroShot, Queries, FirstShots and Prefix on the
// private episodes of icl at smoke scale against the episodes' text: each
// query carries the word that follows its image in the episode, the
// query's answer is the episode's, and a prefix followed by a query is an
// episode again.
func TestEpisodeParts(t *testing.T) {
	d, err := Build("icl", &Options{Scale: Smoke, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	v := Vocab()
	for i := range d.Private {
		ex := &d.Private[i]
		if ex.Canary >= 0 {
			// A canary's words are six-digit secrets of several tokens:
			// not an episode a method could take apart.
			if _, err := EpisodeShots(ex); err == nil {
				t.Errorf("%s: canary read as an episode", ex.ID)
			}
			continue
		}
		n, err := EpisodeShots(ex)
		if err != nil || n != d.Shots {
			t.Fatalf("%s: %d shots (%v), want %d", ex.ID, n, err, d.Shots)
		}
		text := v.Decode(ex.Prompt)
		qs := Queries(ex)
		if len(qs) != n+1 {
			t.Fatalf("%s: %d queries, want %d", ex.ID, len(qs), n+1)
		}
		for j, q := range qs {
			if !slices.Equal(q.Prompt, []int{BOS, Image}) || len(q.Images) != 1 || &q.Images[0][0] != &ex.Images[j][0] {
				t.Fatalf("%s: query %d is not image %d alone", ex.ID, j, j)
			}
			if q.Answer[1] != EOS || !slices.Contains(d.Mapping, v.Word(q.Answer[0])) {
				t.Fatalf("%s: query %d answers %q", ex.ID, j, v.Decode(q.Answer))
			}
		}
		if z := ZeroShot(ex); !slices.Equal(z.Answer, ex.Answer) || z.Label != ex.Label || &z.Images[0][0] != &ex.Images[n][0] {
			t.Fatalf("%s: zero-shot query is not the episode's query", ex.ID)
		}
		if f := FirstShots(ex, 2); len(f.Images) != 3 || !slices.Equal(f.Answer, ex.Answer) {
			t.Fatalf("%s: two shots: %d images", ex.ID, len(f.Images))
		} else if m, err := EpisodeShots(&f); err != nil || m != 2 || v.Decode(f.Prompt[:7]) != v.Decode(ex.Prompt[:7]) {
			t.Fatalf("%s: two shots: %q from %q (%v)", ex.ID, v.Decode(f.Prompt), text, err)
		}
		toks, imgs := Prefix(ex)
		q := qs[0]
		joined := Example{ID: "joined", Prompt: append(toks, q.Prompt[1:]...), Images: append(imgs, q.Images...), Answer: q.Answer}
		if m, err := EpisodeShots(&joined); err != nil || m != n+1 {
			t.Fatalf("%s: prefix + query: %d shots (%v)", ex.ID, m, err)
		}
	}
	if _, err := EpisodeShots(&d.Selection[0]); err != nil {
		t.Errorf("a selection query is not a zero-shot episode: %v", err)
	}
	fashion, _ := Build("fashion-vqa", &Options{Scale: Smoke, Seed: 1})
	if _, err := EpisodeShots(&fashion.Test[0]); err == nil {
		t.Error("a fashion-vqa question read as an episode")
	}
}

// TestSelection checks icl's public selection queries: balanced over the
// task's classes, each answered with its class's word, every image held
// out of pretraining and none shared with the private side, the same at
// every build.
func TestSelection(t *testing.T) {
	d, err := Build("icl", &Options{Scale: Smoke, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Selection) < len(d.Classes) {
		t.Fatalf("%d selection queries for %d classes", len(d.Selection), len(d.Classes))
	}
	private := map[string]bool{}
	for _, split := range [][]Example{d.Private, d.Holdout, d.Test} {
		for i := range split {
			for _, it := range split[i].Items {
				private[it] = true
			}
		}
	}
	count := make([]int, len(d.Classes))
	v := Vocab()
	for _, q := range d.Selection {
		count[q.Label]++
		if got := v.Word(q.Answer[0]); got != d.Mapping[q.Label] {
			t.Fatalf("%s: class %d answered %q, want %q", q.ID, q.Label, got, d.Mapping[q.Label])
		}
		if !PretrainHeldOut(q.Items) || private[q.Items[0]] {
			t.Fatalf("%s: image %s is not a held-out public image", q.ID, q.Items[0])
		}
	}
	if slices.Max(count)-slices.Min(count) > 0 && len(d.Selection) == selectionSizes[Smoke]/len(d.Classes)*len(d.Classes) {
		t.Errorf("unbalanced classes %v", count)
	}
	again, _ := Build("icl", &Options{Scale: Smoke, Seed: 2})
	for i := range d.Selection {
		if d.Selection[i].ID != again.Selection[i].ID || !slices.Equal(d.Selection[i].Items, again.Selection[i].Items) {
			t.Fatal("selection differs between two builds")
		}
	}
}
