// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"slices"
	"strings"
)

// AuditCanaryKind is the Kind of the audit canaries of the -mia tasks.
const AuditCanaryKind = "audit-canary"

// miaSizes are the sizes of the membership-inference variants of the VQA
// tasks: Members regular private examples (a member set small enough to
// be memorised) and AuditCanaries audit canaries, each inserted once into
// private train with probability ½.
var miaSizes = map[Scale]struct{ Members, AuditCanaries int }{
	Smoke: {16, 64},
	Small: {128, 256},
	Full:  {1000, 2000},
}

// The membership-inference variants: shapes-vqa-mia and fashion-vqa-mia are
// their base tasks with the private split cut to a small member set, the
// base's canaries replaced by audit canaries carved from the holdout
// split, whose other examples are the non-members.
func init() {
	for _, base := range []string{"shapes-vqa", "fashion-vqa"} {
		tasks[base+"-mia"] = miaBuilder(base, tasks[base])
		taskArch[base+"-mia"] = taskArch[base]
	}
}

// miaBuilder returns the builder of the -mia variant of the task base
// built by fn. The examples are the base task's at the same scale and seed
// (its random streams are named after base), their IDs under task; then
//
//  1. private train keeps its first Members regular examples (miaSizes);
//  2. the first AuditCanaries holdout examples become audit canaries, the
//     rest stay non-members: each canary's answer is replaced by the answer
//     of a random other example of the same kind that answers differently
//     (a mislabelled canary, as in the black-box audits of Steinke, Nasr &
//     Jagielski 2023, §6), so only a model that trained on it predicts it,
//     and each is inserted once into private train with probability ½ by
//     an independent fair coin, as the one-run audit requires (their §3);
//     Dataset.Canaries lists them all, Reps 1 for those inserted and 0 for
//     the others, Example.Kind AuditCanaryKind;
//  3. private train is shuffled.
//
// References:
//   - T. Steinke, M. Nasr, M. Jagielski, Privacy auditing with one (1)
//     training run, NeurIPS 2023, arXiv:2305.08846.
func miaBuilder(base string, fn builder) builder {
	return func(d *Dataset, b *buildCtx) error {
		task := d.Task
		d.Task = base
		err := fn(d, b)
		d.Task = task
		if err != nil {
			return err
		}
		for _, split := range [][]Example{d.Public, d.Private, d.Holdout, d.Test} {
			for i := range split {
				split[i].ID = task + strings.TrimPrefix(split[i].ID, base)
			}
		}
		sz := miaSizes[d.Scale]
		var priv []Example
		for _, ex := range d.Private {
			if ex.Canary < 0 && len(priv) < sz.Members {
				priv = append(priv, ex)
			}
		}
		if len(priv) < sz.Members || len(d.Holdout) < 2*sz.AuditCanaries {
			return fmt.Errorf("datasets: %s: %d private and %d holdout examples, want %d members and twice %d audit canaries", task, len(priv), len(d.Holdout), sz.Members, sz.AuditCanaries)
		}
		// Answers by kind, to mislabel from.
		answers := map[string][][]int{}
		for _, ex := range slices.Concat(d.Private, d.Holdout) {
			if ex.Canary < 0 {
				answers[ex.Kind] = append(answers[ex.Kind], ex.Answer)
			}
		}
		d.Canaries = nil
		draw, coin := b.rng(task, "audit-canary"), b.rng(task, "audit-coin")
		for c := range sz.AuditCanaries {
			ex := d.Holdout[c]
			pool := answers[ex.Kind]
			for range 100 {
				if a := pool[draw.IntN(len(pool))]; !slices.Equal(a, ex.Answer) {
					ex.Answer = a
					break
				}
			}
			ex.ID = fmt.Sprintf("%s/audit-canary/%d", task, c)
			ex.Canary, ex.Kind = c, AuditCanaryKind
			reps := coin.IntN(2)
			d.Canaries = append(d.Canaries, Canary{ID: ex.ID, Reps: reps, Example: ex, Secret: ex.Answer})
			if reps == 1 {
				in := ex
				in.ID = fmt.Sprintf("%s/private/audit-canary-%d", task, c)
				priv = append(priv, in)
			}
		}
		d.Holdout = d.Holdout[sz.AuditCanaries:]
		b.rng(task, "audit-shuffle").Shuffle(len(priv), func(i, j int) { priv[i], priv[j] = priv[j], priv[i] })
		d.Private = priv
		return nil
	}
}
