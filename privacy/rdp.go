// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package privacy

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// DefaultOrders returns the default Rényi orders of the RDP accountant, in
// increasing order: 1.01, 1.02, 1.03, 1.05, 1.07, Opacus's DEFAULT_ALPHAS
// (1.1, 1.2, …, 10.9, then 12, 13, …, 63, opacus/accountants/rdp.py), and
// 64, 72, 80, 96, 112, 128, 160, 192, 256, 384, 512, 768, 1024. Inside
// Opacus's range the grid is exactly Opacus's, so ε agrees with Opacus
// whenever Opacus's optimal order is not at the edge of its grid.
func DefaultOrders() []float64 {
	o := []float64{1.01, 1.02, 1.03, 1.05, 1.07}
	for x := 1; x < 100; x++ {
		o = append(o, 1+float64(x)/10)
	}
	for a := 12; a < 64; a++ {
		o = append(o, float64(a))
	}
	return append(o, 64, 72, 80, 96, 112, 128, 160, 192, 256, 384, 512, 768, 1024)
}

// RDPOptions configures an RDP accountant. The zero value (or a nil pointer)
// means DefaultOrders and AddOrRemove.
type RDPOptions struct {
	// Orders are the Rényi orders α > 1 (+Inf allowed) at which RDP is
	// tracked, in any order. If nil, DefaultOrders is used. The accountant
	// keeps its own copy.
	Orders []float64
	// Relation is the neighbouring relation; the default is AddOrRemove.
	Relation Relation
}

// RDP is a Rényi-DP accountant (Mironov 2017) for compositions of Gaussian,
// Poisson-subsampled Gaussian, pure-ε and non-private events. It tracks the
// RDP ε(α) at a grid of orders and converts to (ε, δ)-DP with Balle et al.
// (2020), Theorem 21:
//
//	ε(δ) = min over α of  ε(α) + log((α−1)/α) − (log δ + log α)/(α−1),
//
// and back, δ(ε) = min over α of exp((α−1)(ε(α) − ε + log(1−1/α)) − log α).
// RDP of the Poisson-subsampled Gaussian is computed exactly (not bounded)
// with the formulas of Mironov, Talwar & Zhang (2019), §3.3, for integer
// and fractional orders, as Opacus does. (dp_accounting's fractional
// series sums the absolute values of the binomial coefficients, an upper
// bound on A_α: its RDP at fractional orders is slightly larger than ours,
// e.g. 6.7058e-4 instead of the exact 6.5007e-4 in its own test vector.)
//
// References:
//   - I. Mironov. Rényi differential privacy. CSF 2017. arXiv:1702.07476.
//   - I. Mironov, K. Talwar, L. Zhang. Rényi differential privacy of the
//     sampled Gaussian mechanism. arXiv:1908.10530, 2019.
//   - B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato. Hypothesis testing
//     interpretations and Rényi differential privacy. AISTATS 2020.
//     arXiv:1905.09982, Theorem 21.
type RDP struct {
	orders []float64
	rdp    []float64
	rel    Relation
}

var _ Accountant = (*RDP)(nil)

// NewRDP returns an empty RDP accountant. A nil opts means the defaults. It
// returns an error if an order is NaN or ≤ 1 or the relation is unknown.
func NewRDP(opts *RDPOptions) (*RDP, error) {
	var o RDPOptions
	if opts != nil {
		o = *opts
	}
	if err := checkRelation(o.Relation); err != nil {
		return nil, err
	}
	orders := slices.Clone(o.Orders)
	if orders == nil {
		orders = DefaultOrders()
	}
	if len(orders) == 0 {
		return nil, errors.New("privacy: no RDP orders")
	}
	for _, a := range orders {
		if math.IsNaN(a) || a <= 1 {
			return nil, fmt.Errorf("privacy: RDP order is %v, must be > 1", a)
		}
	}
	slices.Sort(orders)
	orders = slices.Compact(orders)
	return &RDP{orders: orders, rdp: make([]float64, len(orders)), rel: o.Relation}, nil
}

// Orders returns a copy of the accountant's orders in increasing order.
func (a *RDP) Orders() []float64 { return slices.Clone(a.orders) }

// RDP returns a copy of the accumulated RDP ε(α) at each of Orders.
func (a *RDP) RDP() []float64 { return slices.Clone(a.rdp) }

// Compose adds the cost of e composed n times. It returns an error, and
// leaves the accountant unchanged, if e's parameters are invalid, n < 0, or
// e is not supported: PoissonSampled with a non-Gaussian inner event,
// Poisson sampling under ReplaceOne, or EpsilonDelta with δ > 0.
func (a *RDP) Compose(e Event, n int) error {
	if err := CheckSteps(n); err != nil {
		return err
	}
	if e == nil {
		return errors.New("privacy: nil event")
	}
	if err := e.check(); err != nil {
		return err
	}
	r := make([]float64, len(a.orders))
	if err := a.eventRDP(r, e); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	for i, v := range r {
		if v != 0 {
			a.rdp[i] += float64(float64(n) * v)
		}
	}
	return nil
}

// eventRDP adds the RDP of one occurrence of e to dst.
func (a *RDP) eventRDP(dst []float64, e Event) error {
	switch e := e.(type) {
	case Gaussian:
		for i, al := range a.orders {
			dst[i] += gaussianRDP(e.multiplier(), al)
		}
	case PoissonGaussian:
		return a.sampledRDP(dst, e.Q, e.Sigma)
	case PoissonSampled:
		g, ok := e.Event.(Gaussian)
		if !ok {
			return fmt.Errorf("privacy: RDP accountant does not support PoissonSampled of %v", e.Event)
		}
		return a.sampledRDP(dst, e.Q, g.multiplier())
	case SelfComposed:
		if e.Count == 0 {
			return nil
		}
		r := make([]float64, len(dst))
		if err := a.eventRDP(r, e.Event); err != nil {
			return err
		}
		for i, v := range r {
			if v != 0 {
				dst[i] += float64(float64(e.Count) * v)
			}
		}
	case Composed:
		for _, x := range e {
			if err := a.eventRDP(dst, x); err != nil {
				return err
			}
		}
	case EpsilonDelta:
		if e.Delta != 0 {
			return fmt.Errorf("privacy: RDP accountant does not support %v with δ > 0", e)
		}
		for i, al := range a.orders {
			dst[i] += pureRDP(e.Epsilon, al)
		}
	case NonPrivate:
		for i := range dst {
			dst[i] = math.Inf(1)
		}
	default:
		return fmt.Errorf("privacy: RDP accountant does not support %T", e)
	}
	return nil
}

func (a *RDP) sampledRDP(dst []float64, q, sigma float64) error {
	if q > 0 && a.rel != AddOrRemove {
		return fmt.Errorf("privacy: Poisson sampling is supported only under %v, not %v", AddOrRemove, a.rel)
	}
	for i, al := range a.orders {
		dst[i] += SampledGaussianRDP(q, sigma, al)
	}
	return nil
}

// gaussianRDP returns the RDP α/(2z²) of the Gaussian mechanism with noise
// multiplier z (Mironov 2017, Proposition 7).
func gaussianRDP(z, alpha float64) float64 {
	if z == 0 {
		return math.Inf(1)
	}
	return alpha / (2 * z * z)
}

// pureRDP returns the RDP at order α of an ε-DP mechanism: that of
// randomised response, which dominates every ε-DP mechanism,
//
//	ε(α) = [log(e^(αε) + e^((1−α)ε)) − log(1 + e^ε)]/(α−1)
//	     = [log cosh((α−½)ε) − log cosh(ε/2)]/(α−1)  ≤ min(ε, αε²/2).
//
// The second form keeps full relative precision for tiny ε, where the
// first cancels (ε(α) ≈ αε²/2 is far below the rounding error of ε).
func pureRDP(eps, alpha float64) float64 {
	switch {
	case eps == 0:
		return 0
	case math.IsInf(eps, 1):
		return math.Inf(1)
	case math.IsInf(alpha, 1):
		return eps
	}
	v := (logCosh((alpha-0.5)*eps) - logCosh(eps/2)) / (alpha - 1)
	return math.Max(0, math.Min(v, eps))
}

// logCosh returns log cosh(x) for x ≥ 0, with full relative precision for
// small x (cosh x − 1 = 2 sinh²(x/2)).
func logCosh(x float64) float64 {
	if x < 20 {
		s := math.Sinh(x / 2)
		return math.Log1p(2 * s * s)
	}
	return x - math.Ln2 + math.Log1p(math.Exp(-2*x))
}

// SampledGaussianRDP returns the Rényi divergence of order alpha between the
// outputs of the Poisson-subsampled Gaussian mechanism with sampling rate q
// and noise multiplier sigma on neighbouring datasets (add/remove relation):
// log(A_α)/(α−1) with A_α as in Mironov, Talwar & Zhang (2019), §3.3, exact
// for integer α and computed by their convergent series for fractional α.
// Edge cases follow Opacus and dp_accounting: q = 0 gives 0; σ = 0 or
// α = +Inf gives +Inf (for q > 0); q = 1 gives α/(2σ²).
func SampledGaussianRDP(q, sigma, alpha float64) float64 {
	switch {
	case q == 0:
		return 0
	case sigma == 0 || math.IsInf(alpha, 1):
		return math.Inf(1)
	case q == 1:
		return alpha / (2 * sigma * sigma)
	}
	return logA(q, sigma, alpha) / (alpha - 1)
}

// logA returns log A_α of the sampled Gaussian mechanism, 0 < q < 1.
func logA(q, sigma, alpha float64) float64 {
	if alpha == math.Trunc(alpha) && alpha < 1<<20 {
		return logAInt(q, sigma, int(alpha))
	}
	return logAFrac(q, sigma, alpha)
}

// logAInt is log A_α for integer α (MTZ 2019, §3.3):
//
//	A_α = Σₖ₌₀^α C(α,k) (1−q)^(α−k) qᵏ exp((k²−k)/(2σ²)).
func logAInt(q, sigma float64, alpha int) float64 {
	la := math.Inf(-1)
	lq, l1q := math.Log(q), math.Log1p(-q)
	for k := 0; k <= alpha; k++ {
		lc := logBinom(float64(alpha), float64(k))
		kf := float64(k)
		la = logAdd(la, lc+float64(kf*lq)+float64(float64(alpha-k)*l1q)+(float64(kf*kf)-kf)/(2*sigma*sigma))
	}
	return la
}

// logAFrac is log A_α for fractional α (MTZ 2019, §3.3): A_α = A₀ + A₁ with
//
//	A₀ = Σᵢ C(α,i) qⁱ (1−q)^(α−i) e^((i²−i)/(2σ²)) · ½ erfc((i−z₀)/(√2σ)),
//	A₁ = Σᵢ C(α,i) q^(α−i) (1−q)ⁱ e^((j²−j)/(2σ²)) · ½ erfc((z₀−j)/(√2σ)),
//
// j = α−i, z₀ = σ² log(1/q − 1) + ½, summed until both terms are below e⁻³⁰
// (relative to the leading terms), as Opacus does. C(α,i) alternates in sign
// for i > α.
func logAFrac(q, sigma, alpha float64) float64 {
	la0, la1 := math.Inf(-1), math.Inf(-1)
	z0 := float64(sigma*sigma*math.Log(1/q-1)) + 0.5
	lq, l1q := math.Log(q), math.Log1p(-q)
	for i := 0; ; i++ {
		fi := float64(i)
		lc, sign := logAbsBinom(alpha, fi)
		j := alpha - fi
		lt0 := lc + float64(fi*lq) + float64(j*l1q)
		lt1 := lc + float64(j*lq) + float64(fi*l1q)
		le0 := math.Log(0.5) + logErfc((fi-z0)/(math.Sqrt2*sigma))
		le1 := math.Log(0.5) + logErfc((z0-j)/(math.Sqrt2*sigma))
		ls0 := lt0 + (float64(fi*fi)-fi)/(2*sigma*sigma) + le0
		ls1 := lt1 + (float64(j*j)-j)/(2*sigma*sigma) + le1
		if sign > 0 {
			la0 = logAdd(la0, ls0)
			la1 = logAdd(la1, ls1)
		} else {
			la0 = logSub(la0, ls0)
			la1 = logSub(la1, ls1)
		}
		if fi > alpha && math.Max(ls0, ls1) < -30+math.Max(la0, la1) || i > 100000 {
			break
		}
	}
	return logAdd(la0, la1)
}

// logBinom returns log C(n, k) for 0 ≤ k ≤ n.
func logBinom(n, k float64) float64 {
	a, _ := math.Lgamma(n + 1)
	b, _ := math.Lgamma(k + 1)
	c, _ := math.Lgamma(n - k + 1)
	return a - b - c
}

// logAbsBinom returns log|C(α, i)| and its sign for real α > 0 and integer
// i ≥ 0, using C(α,i) = Γ(α+1)/(Γ(i+1)Γ(α−i+1)) with the sign of Γ(α−i+1).
func logAbsBinom(alpha, i float64) (float64, int) {
	a, _ := math.Lgamma(alpha + 1)
	b, _ := math.Lgamma(i + 1)
	c, s := math.Lgamma(alpha - i + 1)
	return a - b - c, s
}

// RDPGuarantee is an (ε, δ) guarantee converted from RDP.
type RDPGuarantee struct {
	Epsilon, Delta float64
	// Order is the Rényi order α that gives the guarantee (NaN if none
	// does, for example when ε = +Inf at every order).
	Order float64
	// Warnings holds non-fatal findings, such as the optimal order lying at
	// the edge of the grid, to be shown with the result.
	Warnings []error
}

// ErrOrderAtEdge is the warning given when the optimal order is the
// smallest or the largest finite order of the grid: a wider grid may give a
// smaller ε.
var ErrOrderAtEdge = errors.New("privacy: optimal RDP order is at the edge of the order grid; a wider grid may give a tighter bound")

// Epsilon returns the smallest ε over the orders such that the composition
// so far is (ε, delta)-DP. It returns +Inf if delta is 0 (unless the
// composition is pure ε-DP and +Inf is one of the orders, or costs
// nothing).
func (a *RDP) Epsilon(delta float64) (float64, error) {
	g, err := a.EpsilonOrder(delta)
	return g.Epsilon, err
}

// EpsilonOrder is Epsilon with the optimal order and warnings.
func (a *RDP) EpsilonOrder(delta float64) (RDPGuarantee, error) {
	if err := CheckDelta(delta); err != nil {
		return RDPGuarantee{}, err
	}
	eps, i := rdpToEpsilon(a.orders, a.rdp, delta)
	g := RDPGuarantee{Epsilon: eps, Delta: delta, Order: math.NaN()}
	if i >= 0 {
		g.Order = a.orders[i]
		if g.Epsilon > 0 && a.atEdge(i) {
			g.Warnings = append(g.Warnings, ErrOrderAtEdge)
		}
	}
	return g, nil
}

func (a *RDP) atEdge(i int) bool {
	last := len(a.orders) - 1
	for last > 0 && math.IsInf(a.orders[last], 1) {
		last--
	}
	return len(a.orders) > 1 && (i == 0 || i == last)
}

// rdpToEpsilon converts RDP to ε at delta (Balle et al. 2020, Thm 21) and
// returns ε and the index of the optimal order, or −1 if ε is +Inf.
func rdpToEpsilon(orders, rdp []float64, delta float64) (float64, int) {
	zero := true
	for _, r := range rdp {
		if r != 0 {
			zero = false
			break
		}
	}
	if zero {
		return 0, 0
	}
	best, bi := math.Inf(1), -1
	ld := math.Log(delta)
	for i, al := range orders {
		r := rdp[i]
		var eps float64
		switch {
		case math.IsInf(r, 1) || math.IsNaN(r):
			continue
		case math.IsInf(al, 1):
			eps = r
		case delta == 0:
			continue
		default:
			eps = r + math.Log1p(-1/al) - (ld+math.Log(al))/(al-1)
		}
		if eps < best {
			best, bi = eps, i
		}
	}
	if bi < 0 {
		return math.Inf(1), -1
	}
	return math.Max(0, best), bi
}

// Delta returns the smallest δ over the orders such that the composition so
// far is (epsilon, δ)-DP, by the inverse of the conversion in Epsilon.
func (a *RDP) Delta(epsilon float64) (float64, error) {
	if err := CheckLoss(epsilon); err != nil {
		return 0, err
	}
	return rdpToDelta(a.orders, a.rdp, epsilon), nil
}

func rdpToDelta(orders, rdp []float64, eps float64) float64 {
	best := 0.0 // log δ, capped at log 1
	for i, al := range orders {
		r := rdp[i]
		var ld float64
		switch {
		case math.IsInf(r, 1) || math.IsNaN(r):
			continue
		case r == 0:
			return 0
		case math.IsInf(eps, 1):
			return 0
		case math.IsInf(al, 1):
			if eps >= r {
				return 0
			}
			continue
		default:
			ld = float64((al-1)*(r-eps+math.Log1p(-1/al))) - math.Log(al)
		}
		best = math.Min(best, ld)
	}
	return math.Exp(best)
}
