// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package gia

import "math"

// Assign solves the assignment problem for the n×n cost matrix cost (row
// i, column j at cost[i][j]): it returns the permutation p minimising
// Σᵢ cost[i][p[i]], by the Hungarian method (Kuhn 1955) in the O(n³)
// shortest-augmenting-path form with row and column potentials. Ties are
// broken deterministically. It panics if cost is not square or holds a
// NaN or an infinite value.
func Assign(cost [][]float64) []int {
	n := len(cost)
	for _, r := range cost {
		if len(r) != n {
			panic("gia: cost matrix is not square")
		}
		for _, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				panic("gia: non-finite cost")
			}
		}
	}
	// 1-based arrays: column 0 is the virtual start of each augmentation.
	u, v := make([]float64, n+1), make([]float64, n+1)
	match, way := make([]int, n+1), make([]int, n+1) // match[j]: row of column j
	for i := 1; i <= n; i++ {
		match[0] = i
		j0 := 0
		minv := make([]float64, n+1)
		used := make([]bool, n+1)
		for j := range minv {
			minv[j] = math.Inf(1)
		}
		for match[j0] != 0 {
			used[j0] = true
			i0, delta, j1 := match[j0], math.Inf(1), 0
			for j := 1; j <= n; j++ {
				if used[j] {
					continue
				}
				if cur := cost[i0-1][j-1] - u[i0] - v[j]; cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= n; j++ {
				if used[j] {
					u[match[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
		}
		for j0 != 0 {
			j1 := way[j0]
			match[j0] = match[j1]
			j0 = j1
		}
	}
	p := make([]int, n)
	for j := 1; j <= n; j++ {
		p[match[j]-1] = j - 1
	}
	return p
}
