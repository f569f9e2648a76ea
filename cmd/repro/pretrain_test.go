// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestPretrainCache runs `repro pretrain --json` twice and with --fresh and
// checks that the second run is a cache hit and that all three report the
// same checkpoint hash. It uses the smoke ViT base, which builds in seconds;
// the TinyMLLM base goes through the same cache code and is tested, with its
// quality bounds, in package pretrain.
func TestPretrainCache(t *testing.T) {
	dir := t.TempDir()
	type out struct {
		Checkpoint string             `json:"checkpoint"`
		Hash       string             `json:"hash"`
		Cached     bool               `json:"cached"`
		Metrics    map[string]float64 `json:"metrics"`
	}
	get := func(args ...string) out {
		t.Helper()
		stdout, stderr, err := run(t, append([]string{"pretrain", "--scale", "smoke", "--arch", "vit", "--results", dir, "--json"}, args...)...)
		if err != nil {
			t.Fatalf("repro pretrain %v: %v\n%s", args, err, stderr)
		}
		var o out
		if err := json.Unmarshal([]byte(stdout), &o); err != nil {
			t.Fatalf("repro pretrain --json printed %q: %v", stdout, err)
		}
		return o
	}
	first := get()
	if first.Cached || first.Hash == "" || len(first.Metrics) == 0 {
		t.Errorf("first run: %+v, want a fresh build with a hash and metrics", first)
	}
	if _, err := os.Stat(first.Checkpoint); err != nil {
		t.Errorf("checkpoint: %v", err)
	}
	second := get()
	if !second.Cached || second.Hash != first.Hash {
		t.Errorf("second run: cached %v hash %.12s, want a cache hit with hash %.12s", second.Cached, second.Hash, first.Hash)
	}
	fresh := get("--fresh")
	if fresh.Cached || fresh.Hash != first.Hash {
		t.Errorf("--fresh: cached %v hash %.12s, want a rebuild with hash %.12s", fresh.Cached, fresh.Hash, first.Hash)
	}
}

func TestPretrainText(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, err := run(t, "pretrain", "--scale", "smoke", "--arch", "vit", "--results", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"checkpoint ", "hash ", "heldout_acc"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "eta") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
}

func TestPretrainErrors(t *testing.T) {
	for _, args := range [][]string{
		{"pretrain", "--scale", "huge"},
		{"pretrain", "--arch", "gpt"},
		{"pretrain", "extra"},
		{"pretrain", "--arch", "vit", "--image-encoder", "mlp"},
		{"pretrain", "--arch", "fusion", "--scale", "smoke", "--fusion-mode", "middle"},
		{"pretrain", "--arch", "fusion", "--scale", "smoke", "--image-encoder", "resnet"},
	} {
		if _, _, err := run(t, append(args, "--results", t.TempDir())...); err == nil {
			t.Errorf("repro %v: no error", args)
		}
	}
}
