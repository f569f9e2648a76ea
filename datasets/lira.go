// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// LiRAPoolSeed is the data seed every run of a -lira task draws its pool
// from: the pool (and the public, test and canary examples) are the same
// whatever the run's seed, which only decides which half of the pool the
// run trains on. So the runs of one configuration over many seeds are each
// other's shadow models (Carlini et al. 2022, §IV-B).
const LiRAPoolSeed = 1

// liraPool is the size of the member/non-member pool of the -lira tasks at
// each scale, so that a run trains on about half of it: at smoke and full
// twice the member set of the -mia tasks (miaSizes), at small the same
// 128, about 64 members a run. At small a pool of 256 (about 128 members,
// as many as shapes-vqa-mia's) left the non-private model's leak short of
// what a LiRA control must show (online AUC 0.77, TPR 6% at 1% FPR over
// the 16 runs pooled, measured 2026-11-25); a smaller member set is
// memorised more.
var liraPool = map[Scale]int{
	Smoke: 32,
	Small: 128,
	Full:  2000,
}

// The LiRA variants: shapes-vqa-lira, fashion-vqa-lira and
// fashion-cls-lira pose the base task over a fixed pool of examples of
// which each run trains on a random half chosen by its seed.
func init() {
	for _, base := range []string{"shapes-vqa", "fashion-vqa", "fashion-cls"} {
		tasks[base+"-lira"] = liraBuilder(base, tasks[base])
		taskArch[base+"-lira"] = taskArch[base]
	}
}

// liraBuilder returns the builder of the -lira variant of the task base
// built by fn:
//
//  1. the examples are the base task's at the same scale and at data seed
//     LiRAPoolSeed, whatever the run's seed (its random streams are named
//     after base), their IDs under task;
//  2. the pool is the first liraPool regular examples of private train
//     followed by holdout; pool example 0 is a mislabelled canary, the
//     target of the multi-run audit (mislabel);
//  3. each pool example is a member with probability ½, by an independent
//     fair coin drawn from the run's seed (Dataset.Pool): members form
//     private train and non-members holdout, both in pool order, IDs
//     task/pool/i;
//  4. the base's canaries are dropped: the pool is the audit.
//
// References:
//   - N. Carlini, S. Chien, M. Nasr, S. Song, A. Terzis, F. Tramèr,
//     Membership inference attacks from first principles, IEEE S&P 2022,
//     arXiv:2112.03570.
func liraBuilder(base string, fn builder) builder {
	return func(d *Dataset, b *buildCtx) error {
		task := d.Task
		pb := *b
		pb.opt.Seed = LiRAPoolSeed
		d.Task = base
		err := fn(d, &pb)
		d.Task = task
		if err != nil {
			return err
		}
		for _, split := range [][]Example{d.Public, d.Private, d.Holdout, d.Test} {
			for i := range split {
				split[i].ID = task + strings.TrimPrefix(split[i].ID, base)
			}
		}
		n := liraPool[d.Scale]
		var pool []Example
		for _, ex := range slices.Concat(d.Private, d.Holdout) {
			if ex.Canary < 0 && len(pool) < n {
				pool = append(pool, ex)
			}
		}
		if len(pool) < n {
			return fmt.Errorf("datasets: %s: %d regular private and holdout examples, want a pool of %d", task, len(pool), n)
		}
		mislabel(&pool[0], pool[1:], pb.rng(task, "lira-canary"))
		coin := b.rng(task, "lira-membership")
		d.Pool = make([]bool, n)
		d.Private, d.Holdout, d.Canaries = nil, nil, nil
		for i, ex := range pool {
			ex.ID = fmt.Sprintf("%s/pool/%d", task, i)
			if d.Pool[i] = coin.IntN(2) == 1; d.Pool[i] {
				d.Private = append(d.Private, ex)
			} else {
				d.Holdout = append(d.Holdout, ex)
			}
		}
		return nil
	}
}

// mislabel replaces ex's answer by the answer of a random example of
// others of another kind (a shape or a count where ex asks for a colour),
// or, where all are of ex's kind (fashion-vqa), of one that answers
// differently; ex keeps its answer if none does. An answer of another
// kind is one no model trained without ex gives to its question, so a
// model that learnt ex stands out: the canary is as easy to detect as the
// task allows, which is what an audit wants (Nasr et al., "Adversary
// instantiation", IEEE S&P 2021, find mislabelled canaries the strongest
// of the input-space ones).
//
// A classification example (no answer) gets the label of a random
// example of others with another label.
func mislabel(ex *Example, others []Example, rng *rand.Rand) {
	if ex.Answer == nil {
		var labels []int
		for _, o := range others {
			if o.Label != ex.Label {
				labels = append(labels, o.Label)
			}
		}
		if len(labels) > 0 {
			ex.Label = labels[rng.IntN(len(labels))]
		}
		return
	}
	var other, same [][]int
	for _, o := range others {
		switch {
		case o.Kind != ex.Kind && !slices.Equal(o.Answer, ex.Answer):
			other = append(other, o.Answer)
		case o.Kind == ex.Kind && !slices.Equal(o.Answer, ex.Answer):
			same = append(same, o.Answer)
		}
	}
	if len(other) == 0 {
		other = same
	}
	if len(other) > 0 {
		ex.Answer = other[rng.IntN(len(other))]
	}
}
