// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pretrain_test

import (
	"context"
	"fmt"
	"log"

	"github.com/repro-dp/repro/nn"
	"github.com/repro-dp/repro/pretrain"
)

// A fine-tuning run gets its preset's base, cached after the first call,
// and adds LoRA to it.
func ExampleBase() {
	r, err := pretrain.Base(context.Background(), pretrain.Options{Scale: "smoke", Dir: "results/pretrain"})
	if err != nil {
		log.Fatal(err)
	}
	m := r.TinyMLLM()
	peft := m.Config.PEFT // the preset's rank, α and adapter width
	peft.Method = "lora"
	layout, err := m.SetPEFT(peft)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Hash[:12], layout.Size > 0, r.Manifest.Metrics["finetune_gain"] > 0)
}

// The SPARTA ViT base classifies the four public coarse labels; ViTFor
// gives it a new head for the ten private fine labels.
func ExampleViTFor() {
	r, err := pretrain.Base(context.Background(), pretrain.Options{Scale: "smoke", Arch: "vit"})
	if err != nil {
		log.Fatal(err)
	}
	v, err := pretrain.ViTFor(r.Model.(*nn.ViT), 10, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.Config.Classes)
}
