// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

// The CUDA C kernels of package nn/cuda, compiled to PTX by go generate
// (generate.go: nvcc -ptx -arch=compute_80) and embedded in the binary,
// which the driver compiles for the GPU at hand when the module loads.
//
// Conventions, which package ptx checks against the PTX (ptx_test.go):
//   - every kernel is extern "C" (unmangled name) and is listed in
//     package ptx's Kernels with its parameters in order;
//   - integers are long long (.u64 in the PTX), pointers are .u64,
//     scalars are float (.f32) or double (.f64);
//   - no reduction uses atomics: every sum has one fixed order, so the
//     same inputs give the same bits on the same GPU and build;
//   - products and sums that must match the CPU engine's rounding use
//     the _rn intrinsics, which nvcc never contracts into a fused
//     multiply-add, and __fmaf_rn where the CPU fuses.

#define GEMM_TM 64
#define GEMM_TN 64
#define GEMM_TK 16
#define GEMM_THREADS 256

// sgemm computes C = α·op(A)·op(B) + β·C for row-major matrices, as
// nn.CPU.Gemm does and with the same bits: each element is one fused
// multiply-add chain over p = 0, 1, …, k−1 in increasing order starting
// from zero, then round(α·s) and, when β ≠ 0, round(round(α·s) +
// round(β·C)). op(A) is m×k (A is k×m when tA ≠ 0), op(B) is k×n (B is
// n×k when tB ≠ 0). A block of 16×16 threads computes a 64×64 tile of C,
// each thread a 4×4 grid of it (rows ty + 16r, columns tx + 16c); the
// grid is ⌈n/64⌉ × ⌈m/64⌉ blocks. k ≥ 1.
extern "C" __global__ void sgemm(long long tA, long long tB, long long m, long long n, long long k,
                                 float alpha, const float *__restrict__ A, long long lda,
                                 const float *__restrict__ B, long long ldb, float beta,
                                 float *__restrict__ C, long long ldc)
{
	__shared__ float As[GEMM_TK][GEMM_TM + 1]; // As[p][i] = op(A)[i0+i][p0+p]
	__shared__ float Bs[GEMM_TK][GEMM_TN + 1]; // Bs[p][j] = op(B)[p0+p][j0+j]
	const int tx = threadIdx.x, ty = threadIdx.y;
	const int tid = ty * 16 + tx;
	const long long i0 = (long long)blockIdx.y * GEMM_TM;
	const long long j0 = (long long)blockIdx.x * GEMM_TN;
	float acc[4][4];
	for (int r = 0; r < 4; r++)
		for (int c = 0; c < 4; c++)
			acc[r][c] = 0.0f;
	for (long long p0 = 0; p0 < k; p0 += GEMM_TK) {
		for (int e = tid; e < GEMM_TM * GEMM_TK; e += GEMM_THREADS) {
			// Consecutive threads read consecutive addresses of A.
			int i = tA ? e % GEMM_TM : e / GEMM_TK;
			int p = tA ? e / GEMM_TM : e % GEMM_TK;
			long long gi = i0 + i, gp = p0 + p;
			float v = 0.0f;
			if (gi < m && gp < k)
				v = tA ? A[gp * lda + gi] : A[gi * lda + gp];
			As[p][i] = v;
		}
		for (int e = tid; e < GEMM_TK * GEMM_TN; e += GEMM_THREADS) {
			int p = tB ? e % GEMM_TK : e / GEMM_TN;
			int j = tB ? e / GEMM_TK : e % GEMM_TN;
			long long gp = p0 + p, gj = j0 + j;
			float v = 0.0f;
			if (gp < k && gj < n)
				v = tB ? B[gj * ldb + gp] : B[gp * ldb + gj];
			Bs[p][j] = v;
		}
		__syncthreads();
		const long long left = k - p0;
		const int pmax = left < GEMM_TK ? (int)left : GEMM_TK;
		for (int p = 0; p < pmax; p++) {
			float a[4], b[4];
			for (int r = 0; r < 4; r++)
				a[r] = As[p][ty + 16 * r];
			for (int c = 0; c < 4; c++)
				b[c] = Bs[p][tx + 16 * c];
			for (int r = 0; r < 4; r++)
				for (int c = 0; c < 4; c++)
					acc[r][c] = __fmaf_rn(a[r], b[c], acc[r][c]);
		}
		__syncthreads();
	}
	for (int r = 0; r < 4; r++) {
		long long i = i0 + ty + 16 * r;
		if (i >= m)
			continue;
		for (int c = 0; c < 4; c++) {
			long long j = j0 + tx + 16 * c;
			if (j >= n)
				continue;
			float s = __fmul_rn(alpha, acc[r][c]);
			if (beta != 0.0f)
				s = __fadd_rn(s, __fmul_rn(beta, C[i * ldc + j]));
			C[i * ldc + j] = s;
		}
	}
}

// gelu computes y = x·Φ(x), the exact GELU, elementwise in float32 with
// CUDA's normcdff (Φ to a few ulps; nn's gelu32 is within 2.5e-7).
extern "C" __global__ void gelu(const float *__restrict__ x, float *__restrict__ y, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = __fmul_rn(x[i], normcdff(x[i]));
}

#define ROW_THREADS 256

// blockSum returns the sum of v over the ROW_THREADS threads of the
// block, in one fixed tree order (s[t] += s[t + h] for h = 128, 64, …, 1):
// the same bits whatever the scheduling. Every thread gets the sum.
__device__ double blockSum(double v, double *s)
{
	const int t = threadIdx.x;
	s[t] = v;
	__syncthreads();
	for (int h = ROW_THREADS / 2; h > 0; h >>= 1) {
		if (t < h)
			s[t] = s[t] + s[t + h];
		__syncthreads();
	}
	double r = s[0];
	__syncthreads();
	return r;
}

// blockMax returns the largest v over the block's threads.
__device__ float blockMax(float v, float *s)
{
	const int t = threadIdx.x;
	s[t] = v;
	__syncthreads();
	for (int h = ROW_THREADS / 2; h > 0; h >>= 1) {
		if (t < h)
			s[t] = fmaxf(s[t], s[t + h]);
		__syncthreads();
	}
	float r = s[0];
	__syncthreads();
	return r;
}

// softmax_rows computes y[r] = softmax(x[r]) for each of the rows (cols
// columns each): one block of ROW_THREADS threads a row; thread t takes
// columns t, t + ROW_THREADS, …, the sum of exponentials is accumulated in
// double and reduced by blockSum.
extern "C" __global__ void softmax_rows(const float *__restrict__ x, float *__restrict__ y, long long rows, long long cols)
{
	__shared__ double sd[ROW_THREADS];
	__shared__ float sf[ROW_THREADS];
	const long long r = blockIdx.x;
	if (r >= rows)
		return;
	const float *xr = x + r * cols;
	float *yr = y + r * cols;
	float mx = -INFINITY;
	for (long long j = threadIdx.x; j < cols; j += ROW_THREADS)
		mx = fmaxf(mx, xr[j]);
	mx = blockMax(mx, sf);
	double part = 0;
	for (long long j = threadIdx.x; j < cols; j += ROW_THREADS) {
		float e = expf(__fsub_rn(xr[j], mx));
		yr[j] = e;
		part += (double)e;
	}
	double sum = blockSum(part, sd);
	float inv = (float)(1.0 / sum);
	for (long long j = threadIdx.x; j < cols; j += ROW_THREADS)
		yr[j] = __fmul_rn(yr[j], inv);
}

// layernorm_rows computes y[r] = (x[r] − μ)/√(σ² + eps)·g + b for each row,
// with the mean μ and the biased variance σ² accumulated in double (one
// block a row, blockSum).
extern "C" __global__ void layernorm_rows(const float *__restrict__ x, const float *__restrict__ g,
                                          const float *__restrict__ b, float *__restrict__ y,
                                          long long rows, long long cols, double eps)
{
	__shared__ double sd[ROW_THREADS];
	const long long r = blockIdx.x;
	if (r >= rows)
		return;
	const float *xr = x + r * cols;
	float *yr = y + r * cols;
	double part = 0;
	for (long long j = threadIdx.x; j < cols; j += ROW_THREADS)
		part += (double)xr[j];
	const double mean = blockSum(part, sd) / (double)cols;
	part = 0;
	for (long long j = threadIdx.x; j < cols; j += ROW_THREADS) {
		double d = (double)xr[j] - mean;
		part += d * d;
	}
	const double inv = 1.0 / sqrt(blockSum(part, sd) / (double)cols + eps);
	for (long long j = threadIdx.x; j < cols; j += ROW_THREADS) {
		float xh = (float)(((double)xr[j] - mean) * inv);
		yr[j] = __fadd_rn(__fmul_rn(xh, g[j]), b[j]);
	}
}

// sumsq_rows writes out[i] = Σ_j g[i][j]² (in double) for each of the n
// per-example gradients of length p: one block an example, blockSum.
extern "C" __global__ void sumsq_rows(const float *__restrict__ g, long long n, long long p, double *__restrict__ out)
{
	__shared__ double sd[ROW_THREADS];
	const long long i = blockIdx.x;
	if (i >= n)
		return;
	const float *gi = g + i * p;
	double part = 0;
	for (long long j = threadIdx.x; j < p; j += ROW_THREADS) {
		double v = (double)gi[j];
		part += v * v;
	}
	double s = blockSum(part, sd);
	if (threadIdx.x == 0)
		out[i] = s;
}

// scale_rows multiplies row i of g (n rows of length p) by f[i], as
// nn.Clip applies its factor: f = 0 sets the row to zero (a non-finite
// norm), f = 1 leaves it, and with nudge ≠ 0 an element that the factor
// does not change steps one ulp towards zero. Thread (blockIdx.x,
// blockIdx.y) takes element blockIdx.x·blockDim.x + threadIdx.x of row
// blockIdx.y.
extern "C" __global__ void scale_rows(float *__restrict__ g, long long n, long long p,
                                      const float *__restrict__ f, long long nudge)
{
	const long long i = blockIdx.y;
	const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n || j >= p)
		return;
	const float fi = f[i];
	float *v = g + i * p + j;
	if (fi == 0.0f) {
		*v = 0.0f;
	} else if (fi != 1.0f) {
		float s = __fmul_rn(*v, fi);
		if (nudge && s == *v)
			s = nextafterf(*v, 0.0f);
		*v = s;
	}
}

// sum_noise_scale writes out[j] = float32((float32(Σ_i g[i][j]) + noise[j])·inv)
// for j < p, with the sum over the n rows in order accumulated in double
// (nn.Sum) and each step rounded as methods.Privatizer rounds it; a nil
// noise adds nothing (σ = 0).
extern "C" __global__ void sum_noise_scale(const float *__restrict__ g, long long n, long long p,
                                           const double *__restrict__ noise, double inv,
                                           float *__restrict__ out)
{
	const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= p)
		return;
	double acc = 0;
	for (long long i = 0; i < n; i++)
		acc += (double)g[i * p + j];
	float v = (float)acc;
	if (noise != 0)
		v = (float)((double)v + noise[j]);
	out[j] = (float)((double)v * inv);
}

// sgd_step updates theta[j] −= round(lr·g[j]) for j < p.
extern "C" __global__ void sgd_step(float *__restrict__ theta, const float *__restrict__ g, long long p, float lr)
{
	const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (j < p)
		theta[j] = __fsub_rn(theta[j], __fmul_rn(lr, g[j]));
}

// adam_step is nn/optim's Adam (and AdamW) update of p elements at one
// step count, with its float64 arithmetic rounded step by step as the CPU
// rounds it (the _rn intrinsics, never contracted), so that it gives the
// CPU's bits: with λ the coupled weight decay l2 and decay the decoupled
// factor 1 − ηλ,
//
//	g ← g + λθ;  θ ← θ·decay
//	m ← float32(β₁m + (1−β₁)g);  v ← float32(β₂v + ((1−β₂)g)g)
//	θ ← float32(θ − (step·m)/(√v/bc2 + ε)),  step = η/(1 − β₁ᵗ), bc2 = √(1 − β₂ᵗ).
extern "C" __global__ void adam_step(float *__restrict__ theta, const float *__restrict__ g,
                                     float *__restrict__ m, float *__restrict__ v, long long p,
                                     double b1, double omb1, double b2, double omb2, double eps,
                                     double l2, double decay, double step, double bc2)
{
	const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= p)
		return;
	double th = (double)theta[j];
	double gg = (double)g[j];
	if (l2 != 0.0)
		gg = __dadd_rn(gg, __dmul_rn(l2, th));
	th = __dmul_rn(th, decay);
	float mj = (float)__dadd_rn(__dmul_rn(b1, (double)m[j]), __dmul_rn(omb1, gg));
	float vj = (float)__dadd_rn(__dmul_rn(b2, (double)v[j]), __dmul_rn(__dmul_rn(omb2, gg), gg));
	m[j] = mj;
	v[j] = vj;
	double denom = __dadd_rn(__ddiv_rn(__dsqrt_rn((double)vj), bc2), eps);
	theta[j] = (float)__dsub_rn(th, __ddiv_rn(__dmul_rn(step, (double)mj), denom));
}
