// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package nn

import (
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// This file holds the matrix product of the CPU backend: a register-blocked
// micro-kernel over panels of B, in the manner of Goto and van de Geijn
// and of BLIS (Van Zee and van de Geijn), with kernels in assembly where the
// CPU has AVX2 and FMA or AVX-512 (gemm_amd64.s) and a pure-Go kernel
// everywhere else.
//
// Every element of C is computed the same way, whatever the kernel, the
// tile it falls in and the goroutine that computes it:
//
//	s := float32(0)
//	for p := 0; p < k; p++ {
//		s = fma(op(A)[i][p], op(B)[p][j], s) // one rounding per step
//	}
//	C[i][j] = round(α·s) (β = 0), or round(round(α·s) + round(β·C[i][j]))
//
// with fma the fused multiply-add of IEEE 754 (one rounding to float32).
// The assembly kernels run this chain in the lanes of their vector
// registers; the pure-Go kernel emulates the fused multiply-add exactly
// (fma32). So the result is bit for bit the same on every CPU, with or
// without assembly, and for any number of goroutines.
//
// References:
//   - K. Goto and R. A. van de Geijn, "Anatomy of high-performance matrix
//     multiplication", ACM Transactions on Mathematical Software 34(3), 2008.
//   - F. G. Van Zee and R. A. van de Geijn, "BLIS: A framework for rapidly
//     instantiating BLAS functionality", ACM Transactions on Mathematical
//     Software 41(3), 2015.
//   - S. Boldo and G. Melquiond, "Emulation of FMA and correctly rounded
//     sums: proved algorithms using rounding to odd", IEEE Transactions on
//     Computers 57(4), 2008.

// A gemmKernel computes one mr×nr tile of C (mr = gemmMR, nr its own
// width): the fma chains over p < k of A(i, p) = a[i·rsA + p·csA] and
// B(p, j) = b[p·ldb + j], then C(i, j) = c[i·ldc + j] updated with α and β
// as the file comment says (β = 0 does not read C). k ≥ 1, and the slices
// hold every element the tile touches.
//
// A kernel may have a narrow companion for the panels of at most
// narrow.nr columns (the last panel, or all of a thin product), and short
// kernels (short(rows, …) computes a tile of 1 ≤ rows < gemmMR rows) for
// the rows that do not fill a tile; without them those rows are padded
// with zeros to a full tile. Since every kernel computes the same bits,
// mixing them changes nothing but the time.
type gemmKernel struct {
	name   string
	nr     int
	run    func(k int, a []float32, rsA, csA int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32)
	short  func(rows, k int, a []float32, rsA, csA int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32)
	narrow *gemmKernel
}

// gemmMR is the number of rows of every kernel's tile.
const gemmMR = 6

// Blocking of Gemm. Rows of C are taken gemmMC at a time (the rows of A
// they need stay in the level-2 cache while the panels of B pass by); a
// product of at least gemmParallel multiply-adds hands its (row block,
// panel) pairs to GOMAXPROCS goroutines.
const (
	gemmMC       = 16 * gemmMR
	gemmParallel = 1 << 22
	gemmMaxNR    = 32
)

// gemmGo is the pure-Go kernel: the fallback where no assembly kernel runs
// and the oracle the assembly kernels are tested against.
var gemmGo = gemmKernel{name: "go", nr: 16, run: gemmTileGo}

// gemmUse is the kernel Gemm uses, chosen at start-up: the widest kernel
// the CPU runs (see gemm_amd64.go), unless the environment variable
// REPRO_GEMM names another ("go", "avx2", "avx512") or the package was
// built with the purego build tag.
var gemmUse = chooseGemm(os.Getenv("REPRO_GEMM"))

// chooseGemm returns the kernel named name if the CPU has it, else the
// widest one it has.
func chooseGemm(name string) gemmKernel {
	ks := gemmKernels()
	for _, k := range ks {
		if k.name == name {
			return k
		}
	}
	return ks[0]
}

// GemmKernel returns the name of the micro-kernel the CPU backend uses:
// "avx512", "avx2" or "go".
func GemmKernel() string { return gemmUse.name }

// gemmTileGo is the pure-Go kernel, with tiles of gemmMR×16. Its inner
// loop is fma32 written out, so that the common case stays inline.
func gemmTileGo(k int, a []float32, rsA, csA int, b []float32, ldb int, c []float32, ldc int, alpha, beta float32) {
	const nr = 16
	var acc [gemmMR][nr]float32
	for p := 0; p < k; p++ {
		bp := (*[nr]float32)(b[p*ldb : p*ldb+nr])
		for i := range acc {
			ai := a[i*rsA+p*csA]
			x := float64(ai)
			row := &acc[i]
			for j, bv := range bp {
				s := x*float64(bv) + float64(row[j])
				if fma32Exact(s) {
					row[j] = float32(s)
				} else {
					row[j] = fma32Slow(ai, bv, row[j])
				}
			}
		}
	}
	for i := range acc {
		gemmStore(c[i*ldc:i*ldc+nr], acc[i][:], alpha, beta)
	}
}

// gemmStore sets c = α·s (β = 0) or α·s + β·c, rounding each product and
// the sum to float32 as the assembly kernels do (the conversions keep the
// compiler from fusing them).
func gemmStore(c, s []float32, alpha, beta float32) {
	s = s[:len(c)]
	if beta == 0 {
		for j := range c {
			c[j] = alpha * s[j]
		}
		return
	}
	for j := range c {
		c[j] = float32(alpha*s[j]) + float32(beta*c[j])
	}
}

// fma32 returns x·y + z rounded once to float32, as the FMA instructions
// compute it. The product of two float32 values is exact in float64, so
// the float64 sum s carries a single rounding; rounding s again to float32
// is correct unless s lies exactly halfway between two float32 values (or
// in float32's subnormal range), where fma32Slow settles it.
func fma32(x, y, z float32) float32 {
	s := float64(x)*float64(y) + float64(z)
	if fma32Exact(s) {
		return float32(s)
	}
	return fma32Slow(x, y, z)
}

// fma32Exact reports whether float32(s) is the correct rounding of the
// exact value that the float64 s is the rounding of (x·y + z with float32
// x, y, z): s is not halfway between two float32 values (the 29 bits below
// float32's last mantissa bit are not 1000…0) and not in float32's
// subnormal range (0 < |s| < 2⁻¹²⁶, biased exponent 897).
func fma32Exact(s float64) bool {
	m := math.Float64bits(s) &^ (1 << 63)
	return m&(1<<29-1) != 1<<28 && (m >= 897<<52 || m == 0)
}

// fma32Slow rounds x·y + z to odd in float64 (Boldo and Melquiond 2008):
// the float64 sum s and its error e (Knuth's TwoSum) give the exact value
// s + e; where e ≠ 0 and s has an even last bit, s moves one ulp towards
// e. Rounding to odd with 29 > 2 spare bits, then to nearest float32, is
// the correct rounding of x·y + z.
func fma32Slow(x, y, z float32) float32 {
	p, w := float64(x)*float64(y), float64(z)
	s := p + w
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	v := s - p
	e := (p - (s - v)) + (w - v)
	if b := math.Float64bits(s); e != 0 && b&1 == 0 {
		if (e > 0) == (s > 0) {
			b++
		} else {
			b--
		}
		s = math.Float64frombits(b)
	}
	return float32(s)
}

// gemmBuf holds the scratch memory of one product: packed panels of B,
// the last rows of A padded to gemmMR, and one tile of C per goroutine.
type gemmBuf struct{ f []float32 }

var gemmPool = sync.Pool{New: func() any { return new(gemmBuf) }}

// take returns n elements of the buffer, growing it if needed. They hold
// whatever the last product left there.
func (g *gemmBuf) take(n int) []float32 {
	if cap(g.f) < n {
		g.f = make([]float32, n)
	}
	g.f = g.f[:n]
	return g.f
}

// gemmPlan is one product cut into tiles.
type gemmPlan struct {
	kern              gemmKernel
	m, n, k           int
	a                 []float32
	rsA, csA          int
	b                 []float32 // op(B) row-major with stride ldb where not packed
	ldb               int
	packed            []float32 // panels of op(B), k×nr each; nil where B is read in place
	edge              int       // first column of the last, packed, partial panel when B is read in place (n if none)
	apad              []float32 // rows m−m%gemmMR… of op(A), padded with zeros, gemmMR×k
	c                 []float32
	ldc               int
	alpha, beta       float32
	panels, rowBlocks int
	tiles             []float32 // gemmMR×nr scratch tile per goroutine
}

// gemm computes C = α·op(A)·op(B) + β·C with kernel kern; the shapes are
// checked and k ≥ 1, m ≥ 1, n ≥ 1.
func gemm(kern gemmKernel, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	gemmWith(kern, tA, tB, m, n, k, alpha, a, lda, b, ldb, nil, beta, c, ldc)
}

// gemmWith is gemm, with the panels of op(B) = Bᵀ taken from pre where
// it is not nil (tB; pre packed by packWeight for kern from B): the same
// panels, so the same bits, without packing them again.
func gemmWith(kern gemmKernel, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, pre []float32, beta float32, c []float32, ldc int) {
	gemmRun(kern, tA, tB, m, n, k, alpha, a, lda, b, ldb, pre, beta, c, ldc, nil)
}

// gemmRun is gemmWith, on the tiles that lim keeps (gemmCausal) where lim
// is not nil, on one goroutine.
func gemmRun(kern gemmKernel, tA, tB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, pre []float32, beta float32, c []float32, ldc int, lim *gemmLimit) {
	nr := kern.nr
	p := gemmPlan{kern: kern, m: m, n: n, k: k, a: a, rsA: lda, csA: 1, b: b, ldb: ldb, c: c, ldc: ldc, alpha: alpha, beta: beta}
	if tA {
		p.rsA, p.csA = 1, lda
	}
	p.panels = (n + nr - 1) / nr
	p.rowBlocks = (m + gemmMC - 1) / gemmMC
	w := 1
	if m*n*k >= gemmParallel && lim == nil {
		w = min(runtime.GOMAXPROCS(0), p.rowBlocks*p.panels)
	}
	// Scratch: packed B (all panels when B is transposed, else only a
	// partial last panel), padded A rows, and the tiles.
	nPack := 0
	p.edge = n
	if tB {
		if pre == nil {
			nPack = p.panels
		}
	} else if n%nr != 0 {
		nPack, p.edge = 1, n-n%nr
	}
	nPad := 0
	if m%gemmMR != 0 && kern.short == nil {
		nPad = gemmMR * k
	}
	buf := gemmPool.Get().(*gemmBuf)
	f := buf.take(nPack*k*nr + nPad + w*gemmMR*nr)
	p.packed, f = f[:nPack*k*nr], f[nPack*k*nr:]
	p.apad, p.tiles = f[:nPad], f[nPad:]
	p.pack(tB)
	if pre != nil {
		p.packed = pre
	}
	switch {
	case lim != nil:
		p.limited(lim)
	case w <= 1:
		for it := range p.rowBlocks * p.panels {
			p.block(it, p.tiles)
		}
	default:
		// The goroutines share a copy of the plan on the heap, so that
		// the serial path (most products) allocates nothing.
		q := new(gemmPlan)
		*q = p
		q.parallel(w)
	}
	gemmPool.Put(buf)
}

// parallel computes the product's (row block, panel) pairs on w
// goroutines.
func (p *gemmPlan) parallel(w int) {
	nr := p.kern.nr
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := range w {
		tile := p.tiles[g*gemmMR*nr : (g+1)*gemmMR*nr]
		wg.Go(func() {
			for {
				it := int(next.Add(1) - 1)
				if it >= p.rowBlocks*p.panels {
					return
				}
				p.block(it, tile)
			}
		})
	}
	wg.Wait()
}

// pack fills the packed panels of op(B) and the padded rows of op(A),
// zeros included (the buffer is reused).
func (p *gemmPlan) pack(tB bool) {
	nr, k := p.kern.nr, p.k
	first := 0
	if !tB {
		first = p.edge / nr
	}
	for q := range len(p.packed) / (k * nr) {
		dst := p.packed[q*k*nr : (q+1)*k*nr]
		j0 := (first + q) * nr
		cols := min(nr, p.n-j0)
		if cols < nr {
			clear(dst)
		}
		if !tB {
			for l := 0; l < k; l++ {
				copy(dst[l*nr:l*nr+cols], p.b[l*p.ldb+j0:])
			}
			continue
		}
		p.packT(dst, j0, cols)
	}
	if len(p.apad) > 0 {
		clear(p.apad)
		i0 := p.m - p.m%gemmMR
		for i := i0; i < p.m; i++ {
			row := p.apad[(i-i0)*k : (i-i0+1)*k]
			if p.csA == 1 {
				copy(row, p.a[i*p.rsA:])
				continue
			}
			for l := range row {
				row[l] = p.a[i*p.rsA+l*p.csA]
			}
		}
	}
}

// packT packs columns j0…j0+cols−1 of op(B) = Bᵀ into the panel dst:
// dst[l·nr + j] = B(j0 + j, l), eight rows of B at a time: with AVX2 in
// 8×8 blocks (gemmPackT8), else reading the eight rows side by side so
// that each step writes eight neighbouring elements of dst.
func (p *gemmPlan) packT(dst []float32, j0, cols int) {
	nr, k, ldb := p.kern.nr, p.k, p.ldb
	j := 0
	if n8 := k / 8; n8 > 0 && p.kern.name != "go" {
		for ; j+8 <= cols; j += 8 {
			if !gemmPackT8(dst[j:], nr, p.b[(j0+j)*ldb:], ldb, n8) {
				break
			}
			for l := 8 * n8; l < k; l++ {
				for r := range 8 {
					dst[l*nr+j+r] = p.b[(j0+j+r)*ldb+l]
				}
			}
		}
	}
	for ; j+8 <= cols; j += 8 {
		o := (j0 + j) * ldb
		r0, r1, r2, r3 := p.b[o:o+k], p.b[o+ldb:o+ldb+k], p.b[o+2*ldb:o+2*ldb+k], p.b[o+3*ldb:o+3*ldb+k]
		o += 4 * ldb
		r4, r5, r6, r7 := p.b[o:o+k], p.b[o+ldb:o+ldb+k], p.b[o+2*ldb:o+2*ldb+k], p.b[o+3*ldb:o+3*ldb+k]
		for l := range r0 {
			d := dst[l*nr+j : l*nr+j+8 : l*nr+j+8]
			d[0], d[1], d[2], d[3] = r0[l], r1[l], r2[l], r3[l]
			d[4], d[5], d[6], d[7] = r4[l], r5[l], r6[l], r7[l]
		}
	}
	for ; j < cols; j++ {
		src := p.b[(j0+j)*ldb : (j0+j)*ldb+k]
		for l, v := range src {
			dst[l*nr+j] = v
		}
	}
}

// block computes the tiles of one row block and one panel; tile is the
// goroutine's scratch tile.
func (p *gemmPlan) block(it int, tile []float32) {
	rb, q := it/p.panels, it%p.panels
	cols := min(p.kern.nr, p.n-q*p.kern.nr)
	end := min(p.m, (rb+1)*gemmMC)
	for i0 := rb * gemmMC; i0 < end; {
		rows := gemmTileRows(end-i0, p.kern.short != nil)
		p.tileAt(i0, rows, q, cols, p.k, tile)
		i0 += rows
	}
}

// tileAt computes the tile of C at rows i0…i0+rows−1 and the first cols
// columns of panel q, each element the chain over the first k ≤ p.k
// terms (p.k for gemm; fewer for gemmCausal's shortened chains); tile is
// the goroutine's scratch tile.
func (p *gemmPlan) tileAt(i0, rows, q, cols, k int, tile []float32) {
	nr := p.kern.nr
	j0 := q * nr
	// The panel: in place or packed.
	var b []float32
	ldb := nr
	switch {
	case len(p.packed) > 0 && p.edge == p.n: // B transposed: all packed
		b = p.packed[q*p.k*nr : (q+1)*p.k*nr]
	case j0 >= p.edge: // the partial last panel of B in place
		b = p.packed
	default:
		b, ldb = p.b[j0:], p.ldb
	}
	kern := &p.kern
	for n := kern.narrow; n != nil && cols <= n.nr && !(thinOff && n.nr < 16); n = n.narrow {
		kern = n // same bits, half the work
	}
	a, rsA, csA := p.a[i0*p.rsA:], p.rsA, p.csA
	// A tile of C as wide as the kernel's goes to C; a narrower one, or a
	// padded one, to the scratch tile, then to C.
	direct := cols == kern.nr && (rows == gemmMR || kern.short != nil)
	c, ldc, alpha, beta := p.c[i0*p.ldc+j0:], p.ldc, p.alpha, p.beta
	if !direct {
		c, ldc, alpha, beta = tile, nr, 1, 0
	}
	switch {
	case rows == gemmMR:
		kern.run(k, a, rsA, csA, b, ldb, c, ldc, alpha, beta)
	case kern.short != nil:
		kern.short(rows, k, a, rsA, csA, b, ldb, c, ldc, alpha, beta)
	default: // the last rows, padded to a tile
		kern.run(k, p.apad, p.k, 1, b, ldb, c, ldc, alpha, beta)
	}
	if !direct {
		for i := 0; i < rows; i++ {
			c := p.c[(i0+i)*p.ldc+j0:]
			gemmStore(c[:cols], tile[i*nr:i*nr+cols], p.alpha, p.beta)
		}
	}
}

// gemmTileRows returns the number of rows of the next tile when left rows
// of a row block remain: gemmMR while at least gemmMR remain, then the
// rest. With short kernels, the last 7 to 9 rows are two tiles of 4 and
// 3, 4 and 4, or 5 and 4 rows rather than 6 and 1 to 3. Each row of a
// tile is 2 independent chains of fused multiply-adds; two FMA units of
// latency 4 (AMD Zen 3 and 4) need 8 chains in flight to stay busy, so a
// tile of 4 or 5 rows runs at the full rate, one of 3 at 3/4 of it, and
// one of 1 or 2 at 1/4 or 1/2.
func gemmTileRows(left int, short bool) int {
	if short {
		switch left {
		case 7, 8:
			return 4
		case 9:
			return 5
		}
	}
	return min(gemmMR, left)
}
