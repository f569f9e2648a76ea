// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"reflect"
	"testing"

	"github.com/repro-dp/repro/experiments"
	"github.com/repro-dp/repro/runners"
)

// TestBasesOf checks that the bases pretrained before a Slurm array are
// those of the runs' models: SPARTA's model hyperparameter picks the CNN's
// base, its default the ViT's, and each (scale, architecture) is listed
// once, in order.
func TestBasesOf(t *testing.T) {
	run := func(method, scale string, params map[string]any) *runners.Run {
		return &runners.Run{Config: experiments.Config{Method: method, Scale: scale, Params: params}}
	}
	got := basesOf([]*runners.Run{
		run("sparta", "smoke", map[string]any{"model": "cnn"}),
		run("sparta", "smoke", map[string]any{"mask": "all"}),
		run("sparta", "smoke", map[string]any{"model": "cnn", "mask": "all"}),
		run("dpsgd", "small", nil),
		run("fedavg", "smoke", map[string]any{"fusion": "early"}),
		run("secmmfl", "smoke", nil),
	})
	want := [][]string{
		{"--scale", "small", "--arch", "tinymllm"},
		{"--scale", "smoke", "--arch", "cnn"},
		{"--scale", "smoke", "--arch", "fusion"},
		{"--scale", "smoke", "--arch", "fusion", "--fusion-mode", "early"},
		{"--scale", "smoke", "--arch", "vit"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("bases %v, want %v", got, want)
	}
}
