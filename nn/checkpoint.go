// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/repro-dp/repro/nn/safetensors"
)

// Model is a whole model that can be saved and rebuilt: its tensors plus
// an architecture name and a configuration from which the constructor
// rebuilds the same tensors.
type Model interface {
	Module
	// Describe returns the architecture ("tinymllm", "vit", "fusion" or "cnn")
	// and the configuration, PEFT included.
	Describe() (arch string, c Config)
}

var (
	_ Model = (*TinyMLLM)(nil)
	_ Model = (*ViT)(nil)
	_ Model = (*Fusion)(nil)
	_ Model = (*CNN)(nil)
)

// Describe implements Model.
func (m *TinyMLLM) Describe() (string, Config) { return "tinymllm", m.Config }

// Describe implements Model.
func (m *ViT) Describe() (string, Config) { return "vit", m.Config }

// Describe implements Model.
func (m *Fusion) Describe() (string, Config) { return "fusion", m.Config }

// Architectures maps an architecture name to its constructor.
var Architectures = map[string]func(Config) (Model, error){
	"tinymllm": func(c Config) (Model, error) { return NewTinyMLLM(c) },
	"vit":      func(c Config) (Model, error) { return NewViT(c) },
	"fusion":   func(c Config) (Model, error) { return NewFusion(c) },
	"cnn":      func(c Config) (Model, error) { return NewCNN(c) },
}

// checkpointMeta is the JSON stored in the checkpoint's metadata key
// "config".
type checkpointMeta struct {
	Arch   string `json:"arch"`
	Config Config `json:"config"`
}

// Tensors returns every tensor of m (trainable and frozen) as safetensors
// tensors sharing m's values.
func Tensors(m Module) []safetensors.Tensor {
	ps := m.Params()
	ts := make([]safetensors.Tensor, len(ps))
	for i, p := range ps {
		ts[i] = safetensors.Tensor{Name: p.Name, DType: safetensors.F32, Shape: p.Shape, Data: p.Data}
	}
	return ts
}

// Encode writes m to w as a safetensors checkpoint: every tensor by name in
// F32, and {"arch": …, "config": …} as JSON in the metadata key "config".
// Equal models give equal bytes. Encode writes nothing if a tensor name is
// empty or repeated. nn imports nothing of repro, so it writes no files: the
// caller writes the checkpoint file atomically (pretrain does so with the
// project's atomic-write helper), and Load reads it back.
func Encode(w io.Writer, m Model) error {
	arch, c := m.Describe()
	if err := checkNames(m.Params()); err != nil {
		return err
	}
	if err := safetensors.EncodeConfig(w, Tensors(m), checkpointMeta{Arch: arch, Config: c}); err != nil {
		return fmt.Errorf("nn: encoding checkpoint: %w", err)
	}
	return nil
}

// Load reads a checkpoint file written by Encode, rebuilds the model from its
// configuration and fills in every tensor. The values round-trip bit for
// bit. It returns an error naming the problem if the file is corrupt, names
// an unknown architecture, or has a tensor missing, extra or of the wrong
// shape for the configuration.
func Load(path string) (Model, error) {
	var meta checkpointMeta
	f, err := safetensors.Load(path, &meta)
	if err != nil {
		return nil, fmt.Errorf("nn: loading checkpoint: %w", err)
	}
	build, ok := Architectures[meta.Arch]
	if !ok {
		names := make([]string, 0, len(Architectures))
		for k := range Architectures {
			names = append(names, k)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("nn: checkpoint %s: unknown architecture %q (want one of %s)", path, meta.Arch, strings.Join(names, ", "))
	}
	m, err := build(meta.Config)
	if err != nil {
		return nil, fmt.Errorf("nn: checkpoint %s: %w", path, err)
	}
	if err := f.Fill(Tensors(m)); err != nil {
		return nil, fmt.Errorf("nn: checkpoint %s does not match its configuration: %w", path, err)
	}
	for _, p := range m.Params() {
		if !isFinite(p.Data) {
			return nil, fmt.Errorf("nn: checkpoint %s: tensor %s has NaN or infinite values", path, p.Name)
		}
	}
	return m, nil
}
