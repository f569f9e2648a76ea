// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package attacks

import (
	"context"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// bigPValue is a slow reference for OneRunPValue: the formula of Steinke,
// Nasr & Jagielski (2023, Appendix D) summed term by term in 256-bit
// floating point, with exact binomial coefficients and no incomplete beta
// function.
func bigPValue(m, r, v int, eps, delta float64) float64 {
	const prec = 256
	q := new(big.Float).SetPrec(prec).SetFloat64(1 / (1 + math.Exp(-eps)))
	one := new(big.Float).SetPrec(prec).SetInt64(1)
	nq := new(big.Float).SetPrec(prec).Sub(one, q)
	pmf := func(k int) *big.Float {
		c := new(big.Float).SetPrec(prec).SetInt(new(big.Int).Binomial(int64(r), int64(k)))
		for range k {
			c.Mul(c, q)
		}
		for range r - k {
			c.Mul(c, nq)
		}
		return c
	}
	beta := new(big.Float).SetPrec(prec)
	for k := v; k <= r; k++ {
		beta.Add(beta, pmf(k))
	}
	alpha, s := new(big.Float).SetPrec(prec), new(big.Float).SetPrec(prec)
	for i := 1; i <= v; i++ {
		s.Add(s, pmf(v-i))
		if a := new(big.Float).SetPrec(prec).Quo(s, big.NewFloat(float64(i))); a.Cmp(alpha) > 0 {
			alpha = a
		}
	}
	alpha.Mul(alpha, big.NewFloat(2*delta*float64(m)))
	p, _ := beta.Add(beta, alpha).Float64()
	return min(p, 1)
}

func TestOneRunPValue(t *testing.T) {
	for _, tc := range []struct {
		m, r, v    int
		eps, delta float64
	}{
		{1000, 100, 80, 1, 1e-5},
		{1000, 100, 80, 1, 0},
		{200, 200, 150, 0.5, 1e-5},
		{128, 64, 64, 2, 1e-5},
		{5000, 1000, 700, 0.7, 1e-6},
		{100, 10, 3, 0, 1e-3},
	} {
		got, want := OneRunPValue(tc.m, tc.r, tc.v, tc.eps, tc.delta), bigPValue(tc.m, tc.r, tc.v, tc.eps, tc.delta)
		if math.Abs(got-want) > 1e-10*max(want, 1e-300) && math.Abs(got-want) > 1e-14 {
			t.Errorf("OneRunPValue%v = %v, want %v", tc, got, want)
		}
	}
}

// TestOneRunEpsilonClosedForm: with δ = 0 and every one of r guesses
// correct the p-value is q^r, so the bound at level p is
// ε = log(q/(1−q)) with q = p^(1/r), in closed form.
func TestOneRunEpsilonClosedForm(t *testing.T) {
	for _, tc := range []struct {
		r int
		p float64
	}{{100, 0.05}, {20, 0.05}, {64, 0.0125}, {1000, 0.01}} {
		q := math.Pow(tc.p, 1/float64(tc.r))
		want := math.Log(q / (1 - q))
		if got := OneRunEpsilon(tc.r, tc.r, tc.r, 0, tc.p); math.Abs(got-want) > 2e-6 {
			t.Errorf("r = %d, p = %v: got %v, want %v", tc.r, tc.p, got, want)
		}
	}
	if got := OneRunEpsilon(100, 100, 50, 1e-5, 0.05); got != 0 {
		t.Errorf("chance guessing: bound %v, want 0", got)
	}
}

// TestOneRunValidity simulates the worst case the audit allows: each
// guess of an ε-DP mechanism is correct with probability e^ε/(1+e^ε)
// (randomised response), which OneRun must bound below ε with confidence
// 95%. Over 300 trials the number of bounds above ε is at most
// Binomial(300, 0.05); more than 30 has probability below 1e-3. A planted
// mechanism with ε' = 4 against an accounted ε = 1 must fail every trial.
func TestOneRunValidity(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	trial := func(m int, epsTrue, epsAcc float64) Audit {
		// A score that is the mechanism's guess: +1 (in) or −1 (out),
		// correct with probability q, plus a tiny jitter to order ties.
		q := 1 / (1 + math.Exp(-epsTrue))
		scores, in := make([]float64, m), make([]bool, m)
		for i := range m {
			in[i] = rng.IntN(2) == 1
			g := in[i]
			if rng.Float64() >= q {
				g = !g
			}
			scores[i] = rng.Float64() * 1e-3
			if g {
				scores[i]++
			}
		}
		return OneRun(scores, in, epsAcc, 1e-5)
	}
	above := 0
	for range 300 {
		if a := trial(500, 1, 1); !a.Pass {
			above++
		}
	}
	if above > 30 {
		t.Errorf("honest ε = 1: %d of 300 bounds above ε, want at most 30", above)
	}
	for range 20 {
		if a := trial(500, 4, 1); a.Pass {
			t.Errorf("planted ε' = 4 against ε = 1: bound %v passes (%d of %d)", a.Lower, a.Correct, a.Guesses)
		}
	}
}

func TestAuditOneRunNoCanaries(t *testing.T) {
	_, err := AuditOneRun{}.Run(context.Background(), &Target{Model: nil})
	if err == nil {
		t.Fatal("no error without a model")
	}
	tg := &Target{Model: testModel(t)}
	_, err = AuditOneRun{}.Run(context.Background(), tg)
	if err == nil || !strings.Contains(err.Error(), "audit canaries") {
		t.Errorf("without canaries: error %v, want one naming the audit canaries", err)
	}
}
