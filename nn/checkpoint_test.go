// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/repro-dp/repro/nn/safetensors"
)

func TestCheckpointRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := smokeConfig(t)
	c.Classes = 4
	c.PEFT = PEFT{Method: "lora", BInitStd: 0.1}
	c.SmearKeys, c.CLSLast = true, true
	mllm, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	vit, err := NewViT(c)
	if err != nil {
		t.Fatal(err)
	}
	c.PEFT = PEFT{Method: "bitfit"}
	c.FusionMode = "early"
	fus, err := NewFusion(c)
	if err != nil {
		t.Fatal(err)
	}
	c.PEFT = PEFT{Method: "full"}
	cnn, err := NewCNN(c)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(20, 20))
	for _, m := range []Model{mllm, vit, fus, cnn} {
		// Change the values so the round trip cannot pass by rebuilding
		// the initial model from the seed.
		for _, p := range m.Params() {
			for i := range p.Data {
				p.Data[i] += float32(rng.NormFloat64())
			}
		}
		// Values a text or rounding format would lose: −0, subnormals,
		// the extremes of float32.
		special := []float32{float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -3 * math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32, math.Nextafter32(1, 2)}
		copy(m.Params()[0].Data, special)
		arch, _ := m.Describe()
		path := filepath.Join(dir, arch+".safetensors")
		save(t, path, m)
		got, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		a2, c2 := got.Describe()
		_, c1 := m.Describe()
		if a2 != arch || !reflect.DeepEqual(c2, c1) {
			t.Errorf("%s: loaded %s with configuration\n%+v\nwant\n%+v", arch, a2, c2, c1)
		}
		p1, p2 := m.Params(), got.Params()
		if len(p1) != len(p2) {
			t.Fatalf("%s: %d tensors after loading, want %d", arch, len(p2), len(p1))
		}
		for i := range p1 {
			same := len(p1[i].Data) == len(p2[i].Data)
			for j := 0; same && j < len(p1[i].Data); j++ {
				same = math.Float32bits(p1[i].Data[j]) == math.Float32bits(p2[i].Data[j])
			}
			if p1[i].Name != p2[i].Name || p1[i].Trainable != p2[i].Trainable || !same {
				t.Errorf("%s: tensor %s differs after the round trip", arch, p1[i].Name)
			}
		}
		// Saving again gives the same bytes.
		path2 := filepath.Join(dir, arch+"2.safetensors")
		save(t, path2, got)
		b1, _ := os.ReadFile(path)
		b2, _ := os.ReadFile(path2)
		if !slices.Equal(b1, b2) {
			t.Errorf("%s: re-saved checkpoint differs", arch)
		}
	}
}

// save writes m to the file path with Encode.
func save(t *testing.T, path string, m Model) {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// saveTensors writes ts and meta to the file path with
// safetensors.EncodeConfig.
func saveTensors(t *testing.T, path string, ts []safetensors.Tensor, meta checkpointMeta) {
	t.Helper()
	var buf bytes.Buffer
	if err := safetensors.EncodeConfig(&buf, ts, meta); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckpointErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := smokeConfig(t)
	m, err := NewTinyMLLM(c)
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.safetensors")
	save(t, good, m)
	b, _ := os.ReadFile(good)

	truncated := filepath.Join(dir, "truncated.safetensors")
	os.WriteFile(truncated, b[:len(b)-10], 0o644)
	// A damaged header: its JSON no longer parses.
	header := filepath.Join(dir, "header.safetensors")
	bad := slices.Clone(b)
	bad[8] = 'x' // the header's opening brace
	os.WriteFile(header, bad, 0o644)
	// A configuration that does not build a model.
	badConfig := filepath.Join(dir, "config.safetensors")
	c4 := c
	c4.Heads = 5 // does not divide the width 32
	saveTensors(t, badConfig, Tensors(m), checkpointMeta{Arch: "tinymllm", Config: c4})

	// A checkpoint whose config says LoRA but whose tensors have none.
	c2 := c
	c2.PEFT = PEFT{Method: "lora"}
	mismatch := filepath.Join(dir, "mismatch.safetensors")
	saveTensors(t, mismatch, Tensors(m), checkpointMeta{Arch: "tinymllm", Config: c2})
	// A wider model's config with the smoke tensors.
	c3 := c
	c3.Width = 64
	shape := filepath.Join(dir, "shape.safetensors")
	saveTensors(t, shape, Tensors(m), checkpointMeta{Arch: "tinymllm", Config: c3})
	arch := filepath.Join(dir, "arch.safetensors")
	saveTensors(t, arch, Tensors(m), checkpointMeta{Arch: "gpt", Config: c})
	nan := filepath.Join(dir, "nan.safetensors")
	ts := Tensors(m)
	ts[0].Data = append([]float32(nil), ts[0].Data...)
	ts[0].Data[0] = float32(math.NaN())
	saveTensors(t, nan, ts, checkpointMeta{Arch: "tinymllm", Config: c})

	for _, tc := range []struct {
		path, want string
	}{
		{filepath.Join(dir, "missing.safetensors"), "no such file"},
		{truncated, "nn: loading checkpoint"},
		{header, "nn: loading checkpoint"},
		{badConfig, "not divisible"},
		{mismatch, "lora_a"},
		{shape, "shape"},
		{arch, `unknown architecture "gpt"`},
		{nan, "NaN"},
	} {
		_, err := Load(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one containing %q", filepath.Base(tc.path), err, tc.want)
		}
	}
	_, err = Load(mismatch)
	if !errors.Is(err, safetensors.ErrMissing) {
		t.Errorf("mismatch: error %v does not wrap safetensors.ErrMissing", err)
	}
}
