// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package pipeline

import (
	"strconv"

	"github.com/repro-dp/repro/attacks"
	"github.com/repro-dp/repro/datasets"
	"github.com/repro-dp/repro/nn"
)

// piiPrompts are the public prompts of the PII extraction attack: the
// empty prompt of Lukas et al. and openings of the records' case
// sentences that carry no personal data.
var piiPrompts = []string{"<bos>", "<bos> the applicant ,", "<bos> the court notes that"}

// extractionTarget adds to target what the extraction attacks need from
// d: its secret canaries (the digits of a generative canary's secret are
// drawn uniformly from 0–9), the private records' name mentions with the
// generator's name lists and public prompts when the task has personal
// data, and the base model (nil for none) as the control.
func extractionTarget(target *attacks.Target, d *datasets.Dataset, base *nn.TinyMLLM) {
	target.Base = base
	v := datasets.Vocab()
	digits := make([]int, 10)
	for i := range digits {
		digits[i], _ = v.ID(strconv.Itoa(i))
	}
	for i := range d.Canaries {
		c := &d.Canaries[i]
		if c.Secret == nil || c.Example.Kind == datasets.AuditCanaryKind {
			continue
		}
		target.Secrets = append(target.Secrets, attacks.Secret{ID: int64(i), Reps: c.Reps, Secret: c.Secret,
			Prompt: nn.Sequence{Tokens: c.Example.Prompt, Images: c.Example.Images}, Alphabet: digits})
	}
	pii := &attacks.PIIData{}
	for i := range d.Private {
		ex := &d.Private[i]
		if ex.Canary >= 0 || len(ex.PII) == 0 {
			continue
		}
		toks, _ := ex.Sequence()
		r := attacks.Record{ID: int64(i), Tokens: toks}
		for _, s := range ex.PII {
			if s.Type == datasets.PIIName {
				r.Names = append(r.Names, s.Start)
			}
		}
		pii.Records = append(pii.Records, r)
	}
	if len(pii.Records) == 0 {
		return
	}
	// Names are spelled with sub-word pieces: each is a token sequence.
	encode := func(names []string) [][]int {
		out := make([][]int, len(names))
		for i, w := range names {
			out[i] = v.Encode(nil, w)
		}
		return out
	}
	span := func(lo, n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = lo + i
		}
		return out
	}
	pubFirst, pubSur := datasets.PublicNames()
	privFirst, privSur := datasets.PrivateNames()
	pii.First = append(encode(pubFirst), encode(privFirst)...)
	pii.Surnames = append(encode(pubSur), encode(privSur)...)
	pii.PrivateFirst = span(len(pubFirst), len(privFirst))
	pii.PrivateSurnames = span(len(pubSur), len(privSur))
	for _, p := range piiPrompts {
		pii.Prompts = append(pii.Prompts, nn.Sequence{Tokens: v.Encode(nil, p)})
	}
	target.PII = pii
}
