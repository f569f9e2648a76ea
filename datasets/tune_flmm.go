// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import "fmt"

// fl-mm-tune is fl-mm posed on its public split, for choosing the
// federated recipe (experiments tune-secmmfl): the public image + caption
// pairs whose items pretraining trained on become private train, split over
// the clients by the same Dirichlet(α) label skew, and those held out of
// pretraining (PretrainHeldOut) become the validation split in place of
// test. No private-side item is used; holdout and canaries are empty.
func init() {
	const base = "fl-mm"
	tasks[base+TuneSuffix] = tuneBuilder(base, tuneFLMM)
	taskArch[base+TuneSuffix] = taskArch[base]
}

// tuneFLMM fills fl-mm-tune's private train and validation splits from
// the public split of fl-mm built in d.
func tuneFLMM(d *Dataset, b *buildCtx, task string) error {
	for _, e := range d.Public {
		split := "private"
		if PretrainHeldOut(e.Items) {
			split = "test"
		}
		dst := d.splitRef(split)
		ex := e
		ex.ID = exampleID(task, split, len(*dst))
		*dst = append(*dst, ex)
	}
	if len(d.Test) == 0 || len(d.Private) < d.Clients {
		return fmt.Errorf("datasets: %s at scale %s: %d public examples held out of pretraining and %d others, want ≥ 1 and ≥ %d clients", task, d.Scale, len(d.Test), len(d.Private), d.Clients)
	}
	labels := make([]int, len(d.Private))
	for i, ex := range d.Private {
		labels[i] = ex.Label
	}
	for i, c := range DirichletPartition(b.rng(task, "clients"), labels, d.Clients, d.Alpha) {
		d.Private[i].Client = c
	}
	return nil
}
