// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package datasets

import (
	"math"
	"math/rand/v2"
)

// Gamma draws from the Gamma(shape, 1) distribution with the method of
// Marsaglia and Tsang (2000); for shape < 1 it uses Gamma(shape+1)·U^(1/shape).
// It panics if shape is not positive and finite.
//
// References:
//   - G. Marsaglia and W. W. Tsang, "A simple method for generating gamma
//     variables", ACM TOMS 26(3), 2000.
func Gamma(rng *rand.Rand, shape float64) float64 {
	if !(shape > 0) || math.IsInf(shape, 1) {
		panic("datasets: gamma shape not positive and finite")
	}
	if shape < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return Gamma(rng, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + float64(c*x)
		if v <= 0 {
			continue
		}
		v = float64(v * v * v)
		u := rng.Float64()
		if u < 1-float64(0.0331*x*x*x*x) || math.Log(u) < float64(0.5*x*x)+float64(d*(1-v+math.Log(v))) {
			return d * v
		}
	}
}

// Dirichlet fills dst with a draw from the symmetric Dirichlet(α, …, α)
// distribution of dimension len(dst) and returns it. It panics if α is not
// positive and finite.
func Dirichlet(rng *rand.Rand, dst []float64, alpha float64) []float64 {
	sum := 0.0
	for i := range dst {
		dst[i] = Gamma(rng, alpha)
		sum += dst[i]
	}
	if sum == 0 { // every draw underflowed (tiny α): put all mass on one
		dst[rng.IntN(len(dst))] = 1
		return dst
	}
	for i := range dst {
		dst[i] /= sum
	}
	return dst
}

// DirichletPartition assigns each example to one of clients clients with
// Dirichlet(α) label skew (Hsu, Qi and Brown 2019): for each class it draws
// client proportions p ~ Dir(α·1) and deals the class's examples, in a random
// order, to the clients in the cumulative proportions of p. Small α gives
// clients few classes each; large α approaches an IID split. A partition that
// leaves a client empty is redrawn, up to 100 times; the last one is returned
// if none succeeds (when clients exceeds the number of examples). labels must
// be non-negative. It returns the client of each example.
//
// References:
//   - T.-M. H. Hsu, H. Qi and M. Brown, "Measuring the effects of non-identical
//     data distribution for federated visual classification", arXiv:1909.06335.
func DirichletPartition(rng *rand.Rand, labels []int, clients int, alpha float64) []int {
	if clients <= 0 {
		panic("datasets: non-positive client count")
	}
	classes := 0
	for _, l := range labels {
		if l < 0 {
			panic("datasets: negative label")
		}
		classes = max(classes, l+1)
	}
	byClass := make([][]int, classes)
	for i, l := range labels {
		byClass[l] = append(byClass[l], i)
	}
	out := make([]int, len(labels))
	p := make([]float64, clients)
	for range 100 {
		counts := make([]int, clients)
		for _, idx := range byClass {
			if len(idx) == 0 {
				continue
			}
			order := rng.Perm(len(idx))
			Dirichlet(rng, p, alpha)
			cum, start := 0.0, 0
			for k := range clients {
				cum += p[k]
				end := int(math.Round(cum * float64(len(idx))))
				if k == clients-1 {
					end = len(idx)
				}
				end = max(start, min(end, len(idx)))
				for _, j := range order[start:end] {
					out[idx[j]] = k
				}
				counts[k] += end - start
				start = end
			}
		}
		ok := true
		for _, c := range counts {
			ok = ok && c > 0
		}
		if ok {
			break
		}
	}
	return out
}
