// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package safetensors_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/repro-dp/repro/nn/safetensors"
)

// ExampleEncodeConfig writes two tensors with a configuration to a file,
// loads the configuration, builds destinations from it and fills them.
// (repro writes checkpoint files atomically; the example uses os.Create for
// brevity.)
func ExampleEncodeConfig() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")

	type config struct {
		In  int `json:"in"`
		Out int `json:"out"`
	}
	w := []float32{1, 2, 3, 4, 5, 6}
	b := []float32{0.5, -0.5}
	out, err := os.Create(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = safetensors.EncodeConfig(out, []safetensors.Tensor{
		{Name: "linear.weight", Shape: []int{2, 3}, Data: w},
		{Name: "linear.bias", Shape: []int{2}, Data: b},
	}, config{In: 3, Out: 2})
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Println(err)
		return
	}

	var cfg config
	f, err := safetensors.Load(path, &cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	dst := []safetensors.Tensor{
		{Name: "linear.weight", Shape: []int{cfg.Out, cfg.In}, Data: make([]float32, cfg.Out*cfg.In)},
		{Name: "linear.bias", Shape: []int{cfg.Out}, Data: make([]float32, cfg.Out)},
	}
	if err := f.Fill(dst); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("config %+v\n", cfg)
	fmt.Println("weight", dst[0].Data)
	fmt.Println("bias", dst[1].Data)

	// A model of another shape is refused.
	dst[1].Shape = []int{3}
	dst[1].Data = make([]float32, 3)
	fmt.Println(f.Fill(dst))
	// Output:
	// config {In:3 Out:2}
	// weight [1 2 3 4 5 6]
	// bias [0.5 -0.5]
	// safetensors: tensor "linear.bias": shape [2] in the file, want [3]
}
