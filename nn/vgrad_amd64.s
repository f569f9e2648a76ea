// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !purego

#include "textflag.h"

// The AVX kernels of vgrad.go: per-element passes of the first-order
// step (the backward's accumulations, the per-sample gradients' norms,
// clipping and sum), each lane running exactly the scalar operations of
// the Go loop it replaces (no fused multiply-adds: the Go loops have none
// on amd64) and every sum in its order, so the results are the same bits.

// func axpyAVX2(y, a, x *float32, alpha float32, n8 int)
// y[j] = a[j] + alpha·x[j] (the product rounded, then the sum), or
// y[j] = +0 + alpha·x[j] when a is nil, eight elements at a time.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ x+16(FP), DX
	VBROADCASTSS alpha+24(FP), Y15
	MOVQ n8+32(FP), CX
	TESTQ SI, SI
	JZ axpyAVX2_zero
axpyAVX2_loop:
	VMULPS (DX), Y15, Y1
	VMOVUPS (SI), Y0
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ axpyAVX2_loop
	VZEROUPPER
	RET
axpyAVX2_zero:
	VXORPS Y14, Y14, Y14
axpyAVX2_zloop:
	VMULPS (DX), Y15, Y1
	VADDPS Y1, Y14, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ axpyAVX2_zloop
	VZEROUPPER
	RET

// func mulAddAVX2(y, s, a, b *float32, n8 int)
// y[j] = s[j] + a[j]·b[j] (the product rounded, then the sum), or
// y[j] = +0 + a[j]·b[j] when s is nil, eight elements at a time.
TEXT ·mulAddAVX2(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ s+8(FP), R8
	MOVQ a+16(FP), SI
	MOVQ b+24(FP), DX
	MOVQ n8+32(FP), CX
	TESTQ R8, R8
	JZ mulAddAVX2_zero
mulAddAVX2_loop:
	VMOVUPS (SI), Y1
	VMULPS (DX), Y1, Y1
	VMOVUPS (R8), Y0
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R8
	ADDQ $32, DI
	DECQ CX
	JNZ mulAddAVX2_loop
	VZEROUPPER
	RET
mulAddAVX2_zero:
	VXORPS Y14, Y14, Y14
mulAddAVX2_zloop:
	VMOVUPS (SI), Y1
	VMULPS (DX), Y1, Y1
	VADDPS Y1, Y14, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ mulAddAVX2_zloop
	VZEROUPPER
	RET

// func scaleAVX2(x *float32, alpha float32, n8 int)
// x[j] = x[j]·alpha, eight elements at a time.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	VBROADCASTSS alpha+8(FP), Y15
	MOVQ n8+16(FP), CX
scaleAVX2_loop:
	VMOVUPS (DI), Y0
	VMULPS Y15, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JNZ scaleAVX2_loop
	VZEROUPPER
	RET

// func sumSq8AVX2(x *[8]*float32, n4 int, s *[8]float64)
// s[k] = Σ_j float64(x_k[j])² over the first 4·n4 elements of the eight
// vectors x_k, n4 ≥ 1, each vector's chain in its own lane and in order:
// four vectors a half, their next four elements transposed into four
// vectors, squared (exactly: a float32's square fits a float64) and added
// in element order. Two independent chains of lanes (vectors 0–3, 4–7).
TEXT ·sumSq8AVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), AX
	MOVQ 0(AX), R8
	MOVQ 8(AX), R9
	MOVQ 16(AX), R10
	MOVQ 24(AX), R11
	MOVQ 32(AX), R12
	MOVQ 40(AX), R13
	MOVQ 48(AX), SI
	MOVQ 56(AX), DI
	MOVQ n4+8(FP), CX
	XORQ BX, BX
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
sumSq8AVX2_loop:
	VMOVUPS (R8)(BX*1), X0
	VMOVUPS (R9)(BX*1), X1
	VMOVUPS (R10)(BX*1), X2
	VMOVUPS (R11)(BX*1), X3
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VUNPCKLPS X3, X2, X6
	VUNPCKHPS X3, X2, X7
	VMOVLHPS X6, X4, X0
	VMOVHLPS X4, X6, X1
	VMOVLHPS X7, X5, X2
	VMOVHLPS X5, X7, X3
	VCVTPS2PD X0, Y0
	VMULPD Y0, Y0, Y0
	VADDPD Y0, Y8, Y8
	VCVTPS2PD X1, Y1
	VMULPD Y1, Y1, Y1
	VADDPD Y1, Y8, Y8
	VCVTPS2PD X2, Y2
	VMULPD Y2, Y2, Y2
	VADDPD Y2, Y8, Y8
	VCVTPS2PD X3, Y3
	VMULPD Y3, Y3, Y3
	VADDPD Y3, Y8, Y8
	VMOVUPS (R12)(BX*1), X0
	VMOVUPS (R13)(BX*1), X1
	VMOVUPS (SI)(BX*1), X2
	VMOVUPS (DI)(BX*1), X3
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VUNPCKLPS X3, X2, X6
	VUNPCKHPS X3, X2, X7
	VMOVLHPS X6, X4, X0
	VMOVHLPS X4, X6, X1
	VMOVLHPS X7, X5, X2
	VMOVHLPS X5, X7, X3
	VCVTPS2PD X0, Y0
	VMULPD Y0, Y0, Y0
	VADDPD Y0, Y9, Y9
	VCVTPS2PD X1, Y1
	VMULPD Y1, Y1, Y1
	VADDPD Y1, Y9, Y9
	VCVTPS2PD X2, Y2
	VMULPD Y2, Y2, Y2
	VADDPD Y2, Y9, Y9
	VCVTPS2PD X3, Y3
	VMULPD Y3, Y3, Y3
	VADDPD Y3, Y9, Y9
	ADDQ $16, BX
	DECQ CX
	JNZ sumSq8AVX2_loop
	MOVQ s+16(FP), AX
	VMOVUPD Y8, (AX)
	VMOVUPD Y9, 32(AX)
	VZEROUPPER
	RET

// func accAVX2(acc *float64, gs *[4]*float32, n4 int)
// acc[j] = (((acc[j] + float64(g_0[j])) + float64(g_1[j])) + float64(g_2[j]))
// + float64(g_3[j]), four elements at a time: each element's chain adds
// the four vectors in order.
TEXT ·accAVX2(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), DI
	MOVQ gs+8(FP), AX
	MOVQ 0(AX), R8
	MOVQ 8(AX), R9
	MOVQ 16(AX), R10
	MOVQ 24(AX), R11
	MOVQ n4+16(FP), CX
	XORQ BX, BX
accAVX2_loop:
	VMOVUPD (DI), Y0
	VCVTPS2PD (R8)(BX*1), Y1
	VADDPD Y1, Y0, Y0
	VCVTPS2PD (R9)(BX*1), Y2
	VADDPD Y2, Y0, Y0
	VCVTPS2PD (R10)(BX*1), Y3
	VADDPD Y3, Y0, Y0
	VCVTPS2PD (R11)(BX*1), Y4
	VADDPD Y4, Y0, Y0
	VMOVUPD Y0, (DI)
	ADDQ $16, BX
	ADDQ $32, DI
	DECQ CX
	JNZ accAVX2_loop
	VZEROUPPER
	RET

// func normRowHAVX2(y, h, x, gain, b *float32, n4 int, m, r float64)
// h[j] = float32((float64(x[j]) − m)·r), y[j] = h[j]·gain[j] (+ b[j] when
// b is not nil), four elements at a time: normRowAVX2 that also stores
// the normalised row (a training tape's LayerNorm).
TEXT ·normRowHAVX2(SB), NOSPLIT, $0-64
	MOVQ y+0(FP), DI
	MOVQ h+8(FP), DX
	MOVQ x+16(FP), SI
	MOVQ gain+24(FP), R8
	MOVQ b+32(FP), R9
	MOVQ n4+40(FP), CX
	VBROADCASTSD m+48(FP), Y14
	VBROADCASTSD r+56(FP), Y15
	TESTQ R9, R9
	JZ normRowHAVX2_nob
normRowHAVX2_loop:
	VCVTPS2PD (SI), Y0
	VSUBPD Y14, Y0, Y0
	VMULPD Y15, Y0, Y0
	VCVTPD2PSY Y0, X0
	VMOVUPS X0, (DX)
	VMULPS (R8), X0, X0
	VADDPS (R9), X0, X0
	VMOVUPS X0, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	ADDQ $16, DX
	ADDQ $16, R8
	ADDQ $16, R9
	DECQ CX
	JNZ normRowHAVX2_loop
	VZEROUPPER
	RET
normRowHAVX2_nob:
	VCVTPS2PD (SI), Y0
	VSUBPD Y14, Y0, Y0
	VMULPD Y15, Y0, Y0
	VCVTPD2PSY Y0, X0
	VMOVUPS X0, (DX)
	VMULPS (R8), X0, X0
	VMOVUPS X0, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	ADDQ $16, DX
	ADDQ $16, R8
	DECQ CX
	JNZ normRowHAVX2_nob
	VZEROUPPER
	RET

// func softDot4AVX2(p, d *float32, stride, n4 int, s *[4]float64)
// The softmax backward's dots of four rows (rows r = 0…3 at p + r·stride
// and d + r·stride, stride in elements): s[r] = Σ_j float64(p_r[j])·
// float64(d_r[j]) over the first 4·n4 columns, one float64 chain a row
// in column order, each row in its own lane (the columns transposed as in
// sumSq8AVX2). A float32 product is exact in float64; the chains start
// at +0, as the Go loop's.
TEXT ·softDot4AVX2(SB), NOSPLIT, $0-40
	MOVQ p+0(FP), R8
	MOVQ d+8(FP), R12
	MOVQ stride+16(FP), AX
	SHLQ $2, AX
	LEAQ (R8)(AX*1), R9
	LEAQ (R9)(AX*1), R10
	LEAQ (R10)(AX*1), R11
	LEAQ (R12)(AX*1), R13
	LEAQ (R13)(AX*1), SI
	LEAQ (SI)(AX*1), DI
	MOVQ n4+24(FP), CX
	XORQ BX, BX
	VXORPD Y8, Y8, Y8
softDot4AVX2_loop:
	VMOVUPS (R8)(BX*1), X0
	VMOVUPS (R9)(BX*1), X1
	VMOVUPS (R10)(BX*1), X2
	VMOVUPS (R11)(BX*1), X3
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VUNPCKLPS X3, X2, X6
	VUNPCKHPS X3, X2, X7
	VMOVLHPS X6, X4, X0
	VMOVHLPS X4, X6, X1
	VMOVLHPS X7, X5, X2
	VMOVHLPS X5, X7, X3
	VMOVUPS (R12)(BX*1), X10
	VMOVUPS (R13)(BX*1), X11
	VMOVUPS (SI)(BX*1), X12
	VMOVUPS (DI)(BX*1), X13
	VUNPCKLPS X11, X10, X4
	VUNPCKHPS X11, X10, X5
	VUNPCKLPS X13, X12, X6
	VUNPCKHPS X13, X12, X7
	VMOVLHPS X6, X4, X10
	VMOVHLPS X4, X6, X11
	VMOVLHPS X7, X5, X12
	VMOVHLPS X5, X7, X13
	VCVTPS2PD X0, Y0
	VCVTPS2PD X10, Y10
	VMULPD Y10, Y0, Y0
	VADDPD Y0, Y8, Y8
	VCVTPS2PD X1, Y1
	VCVTPS2PD X11, Y11
	VMULPD Y11, Y1, Y1
	VADDPD Y1, Y8, Y8
	VCVTPS2PD X2, Y2
	VCVTPS2PD X12, Y12
	VMULPD Y12, Y2, Y2
	VADDPD Y2, Y8, Y8
	VCVTPS2PD X3, Y3
	VCVTPS2PD X13, Y13
	VMULPD Y13, Y3, Y3
	VADDPD Y3, Y8, Y8
	ADDQ $16, BX
	DECQ CX
	JNZ softDot4AVX2_loop
	MOVQ s+32(FP), AX
	VMOVUPD Y8, (AX)
	VZEROUPPER
	RET

// func softBackAVX2(p, d *float32, s float64, n4 int)
// d[j] = float32(float64(p[j])·(float64(d[j]) − s)), the difference
// rounded, then the product, four elements at a time.
TEXT ·softBackAVX2(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVQ d+8(FP), DI
	VBROADCASTSD s+16(FP), Y15
	MOVQ n4+24(FP), CX
softBackAVX2_loop:
	VCVTPS2PD (DI), Y1
	VSUBPD Y15, Y1, Y1
	VCVTPS2PD (SI), Y0
	VMULPD Y1, Y0, Y0
	VCVTPD2PSY Y0, X0
	VMOVUPS X0, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	DECQ CX
	JNZ softBackAVX2_loop
	VZEROUPPER
	RET

// func softSum4AVX2(p *float32, stride, n4 int, s *[4]float64)
// The softmax's sums of four rows (row r at p + r·stride, stride in
// elements): s[r] = Σ_j float64(p_r[j]) over the first 4·n4 columns, one
// float64 chain a row in column order from +0, each row in its own lane.
TEXT ·softSum4AVX2(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), R8
	MOVQ stride+8(FP), AX
	SHLQ $2, AX
	LEAQ (R8)(AX*1), R9
	LEAQ (R9)(AX*1), R10
	LEAQ (R10)(AX*1), R11
	MOVQ n4+16(FP), CX
	XORQ BX, BX
	VXORPD Y8, Y8, Y8
softSum4AVX2_loop:
	VMOVUPS (R8)(BX*1), X0
	VMOVUPS (R9)(BX*1), X1
	VMOVUPS (R10)(BX*1), X2
	VMOVUPS (R11)(BX*1), X3
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VUNPCKLPS X3, X2, X6
	VUNPCKHPS X3, X2, X7
	VMOVLHPS X6, X4, X0
	VMOVHLPS X4, X6, X1
	VMOVLHPS X7, X5, X2
	VMOVHLPS X5, X7, X3
	VCVTPS2PD X0, Y0
	VADDPD Y0, Y8, Y8
	VCVTPS2PD X1, Y1
	VADDPD Y1, Y8, Y8
	VCVTPS2PD X2, Y2
	VADDPD Y2, Y8, Y8
	VCVTPS2PD X3, Y3
	VADDPD Y3, Y8, Y8
	ADDQ $16, BX
	DECQ CX
	JNZ softSum4AVX2_loop
	MOVQ s+24(FP), AX
	VMOVUPD Y8, (AX)
	VZEROUPPER
	RET
