// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// peftModules describes the modules p adds to a model, one string per
// (part, module kind, target, size).
func peftModules(p PEFT, defParts func(method string) []string) map[string]bool {
	m := map[string]bool{}
	if p.Method != "lora" && p.Method != "adapter" {
		return m
	}
	p = p.withDefaults()
	sel := p.Parts
	if len(sel) == 0 {
		sel = defParts(p.Method)
	}
	for _, pt := range sel {
		if p.Method == "adapter" {
			m[fmt.Sprintf("adapter in %s, width %d", pt, p.AdapterDim)] = true
			continue
		}
		for _, t := range p.Targets {
			m[fmt.Sprintf("LoRA on %s %s, rank %d", pt, t, p.Rank)] = true
		}
	}
	return m
}

// part is a named group of a model's tensors that PEFT.Parts selects.
type part struct {
	name   string
	stacks []*Stack
	params func() []*Param
}

// peftStream is the PCG stream of the initial values of LoRA and adapter
// tensors; base tensors use stream 1, so adding PEFT never changes them.
const peftStream = 2

// applyPEFT adds the modules p needs to the parts' transformer blocks and
// marks the trainable tensors: those of p.Method in the selected parts, plus
// the head unless the method is none.
//
// The model must be rebuildable from its configuration, so the modules it
// already has (those of cur, its current PEFT) must be among those p asks
// for; applyPEFT returns an error otherwise.
func applyPEFT(p, cur PEFT, seed uint64, parts []part, defParts func(method string) []string, head []*Param, all func() []*Param) error {
	names := make([]string, len(parts))
	for i, pt := range parts {
		names[i] = pt.name
	}
	if err := p.check(names); err != nil {
		return err
	}
	have, want := peftModules(cur, defParts), peftModules(p, defParts)
	for m := range have {
		if !want[m] {
			return fmt.Errorf("nn: the model already has PEFT modules (%s) that %q would not create; build a new model from its configuration instead", m, p.Method)
		}
	}
	p = p.withDefaults()
	sel := p.Parts
	if len(sel) == 0 {
		sel = defParts(p.Method)
	}
	if p.Seed != 0 {
		seed = p.Seed
	}
	rng := rand.New(rand.NewPCG(seed, peftStream))
	for _, pt := range parts {
		if !slices.Contains(sel, pt.name) {
			continue
		}
		for _, s := range pt.stacks {
			for _, b := range s.Blocks {
				switch p.Method {
				case "lora":
					ls := b.Linears()
					for _, t := range []string{"q", "k", "v", "o", "fc1", "fc2"} {
						if slices.Contains(p.Targets, t) && ls[t].LoRAA == nil {
							ls[t].AddLoRA(p.Rank, p.Alpha, p.BInitStd, rng)
						}
					}
				case "adapter":
					d := b.Q.In()
					if b.Adapter1 == nil {
						b.Adapter1 = newAdapter(b.Name+".adapter1", d, p.AdapterDim, rng)
					}
					if b.Adapter2 == nil {
						b.Adapter2 = newAdapter(b.Name+".adapter2", d, p.AdapterDim, rng)
					}
				}
			}
		}
	}
	for _, q := range all() {
		q.Trainable = false
	}
	if p.Method == "" || p.Method == "none" {
		return nil
	}
	for _, pt := range parts {
		if !slices.Contains(sel, pt.name) {
			continue
		}
		for _, q := range pt.params() {
			switch p.Method {
			case "lora":
				q.Trainable = q.Kind == KindLoRAA || q.Kind == KindLoRAB
			case "adapter":
				q.Trainable = q.Kind == KindAdapter
			case "bitfit":
				q.Trainable = q.Kind == KindBias
			case "full":
				q.Trainable = true
			}
		}
	}
	for _, q := range head {
		q.Trainable = true
	}
	return nil
}
