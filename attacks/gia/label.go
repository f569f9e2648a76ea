// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

// LabelIDLG returns the label of a batch of one from the released gradient
// gb of the classifier head's bias. With softmax cross-entropy the bias
// gradient is p − onehot(y), whose only negative entry is the label's
// (Zhao et al. 2020, iDLG, §3 make the same argument on the head's weight
// rows); LabelIDLG returns the index of the smallest entry, so it also
// answers under noise, where it may be wrong. It panics if gb is empty.
func LabelIDLG(gb []float32) int {
	if len(gb) == 0 {
		panic("gia: empty bias gradient")
	}
	best := 0
	for i, v := range gb {
		if v < gb[best] {
			best = i
		}
	}
	return best
}

// LabelsSign returns b labels of a batch of b from the released mean
// gradient gb of the head's bias, by the gradient-sign rule (Wainakh et al.
// 2022, "simple" strategy): each example of class c adds (p_c − 1)/b ≈
// −1/b to entry c and a small positive p_c′/b to the others, so the
// negative entries are the classes present and their counts follow from
// repeatedly taking the most negative entry and adding 1/b to it. The
// labels are returned in the order they were taken. It panics if b < 1 or
// gb is empty.
func LabelsSign(gb []float32, b int) []int {
	if b < 1 || len(gb) == 0 {
		panic("gia: label recovery needs a batch and a bias gradient")
	}
	v := make([]float64, len(gb))
	for i, x := range gb {
		v[i] = float64(x)
	}
	out := make([]int, 0, b)
	for range b {
		best := 0
		for i := range v {
			if v[i] < v[best] {
				best = i
			}
		}
		out = append(out, best)
		v[best] += 1 / float64(b)
	}
	return out
}

// LabelAccuracy returns the fraction of the true labels matched by a
// recovered label, counting multiplicities (the multiset intersection over
// len(truth)); order does not matter, as label recovery gives no order.
func LabelAccuracy(got, truth []int) float64 {
	if len(truth) == 0 {
		return 0
	}
	n := map[int]int{}
	for _, y := range got {
		n[y]++
	}
	hit := 0
	for _, y := range truth {
		if n[y] > 0 {
			n[y]--
			hit++
		}
	}
	return float64(hit) / float64(len(truth))
}
