// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"slices"
)

// An icl episode's prompt is <bos>, then <image> w ; per demonstration,
// then the query's <image>; its answer is the query's word and <eos>
// (buildICL). These functions take episodes apart for methods that pose
// their images one at a time (DP-MTV's zero-shot queries) or with fewer
// demonstrations.

// EpisodeShots returns the number of demonstrations of the icl episode
// ex, or an error if ex is not one.
func EpisodeShots(ex *Example) (int, error) {
	p := ex.Prompt
	n := len(ex.Images) - 1
	if n < 0 || len(p) != 2+3*n || p[0] != BOS || p[len(p)-1] != Image || len(ex.Answer) != 2 || ex.Answer[1] != EOS {
		return 0, fmt.Errorf("datasets: example %s is not an in-context episode", ex.ID)
	}
	semi, _ := Vocab().ID(";")
	for j := range n {
		if p[1+3*j] != Image || p[3+3*j] != semi {
			return 0, fmt.Errorf("datasets: example %s is not an in-context episode", ex.ID)
		}
	}
	return n, nil
}

// ZeroShot returns the query of the icl episode ex alone: the prompt
// <bos> <image> with the query's image and the episode's answer. It
// panics if ex is not an episode (EpisodeShots).
func ZeroShot(ex *Example) Example {
	n := mustShots(ex)
	q := newExample(ex.ID + "/query")
	q.Kind, q.Label, q.Canary = "query", ex.Label, ex.Canary
	q.Prompt = []int{BOS, Image}
	q.Images = ex.Images[n : n+1]
	q.Items = itemAt(ex, n)
	q.Answer = slices.Clone(ex.Answer)
	return q
}

// Queries returns one zero-shot query per labelled image of the icl
// episode ex: its demonstrations, each with its word, then its query
// with the answer. It panics if ex is not an episode.
func Queries(ex *Example) []Example {
	n := mustShots(ex)
	out := make([]Example, 0, n+1)
	for j := range n {
		q := newExample(fmt.Sprintf("%s/demo-%d", ex.ID, j))
		q.Kind, q.Canary = "query", ex.Canary
		q.Prompt = []int{BOS, Image}
		q.Images = ex.Images[j : j+1]
		q.Items = itemAt(ex, j)
		q.Answer = []int{ex.Prompt[2+3*j], EOS}
		out = append(out, q)
	}
	return append(out, ZeroShot(ex))
}

// FirstShots returns the icl episode ex with its first n demonstrations
// only (all of them when n is at least their number). It panics if ex is
// not an episode or n < 0.
func FirstShots(ex *Example, n int) Example {
	have := mustShots(ex)
	if n < 0 {
		panic("datasets: negative shots")
	}
	if n >= have {
		return *ex
	}
	out := *ex
	out.Prompt = append(slices.Clone(ex.Prompt[:1+3*n]), Image)
	out.Images = append(slices.Clone(ex.Images[:n]), ex.Images[have])
	if len(ex.Items) == have+1 {
		out.Items = append(slices.Clone(ex.Items[:n]), ex.Items[have])
	}
	return out
}

// Prefix returns the icl episode ex as demonstrations for another query:
// its prompt with the query's word and ";" after the final <image>, and
// its images (its query becomes one more
// demonstration). Prepending it to a zero-shot query's prompt (after the
// query's <bos>) gives an episode with ex's n+1 labelled images as
// demonstrations. It panics if ex is not an episode.
func Prefix(ex *Example) (tokens []int, images [][]float32) {
	mustShots(ex)
	semi, _ := Vocab().ID(";")
	tokens = append(slices.Clone(ex.Prompt[:len(ex.Prompt)-1]), Image, ex.Answer[0], semi)
	return tokens, slices.Clone(ex.Images)
}

func mustShots(ex *Example) int {
	n, err := EpisodeShots(ex)
	if err != nil {
		panic(err)
	}
	return n
}

func itemAt(ex *Example, i int) []string {
	if i < len(ex.Items) {
		return []string{ex.Items[i]}
	}
	return nil
}
