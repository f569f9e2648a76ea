// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !purego

#include "textflag.h"

// The AVX kernels of vrow.go: per-element passes of the forward pass, each
// lane running exactly the scalar operations of the Go loop it replaces
// (no fused multiply-adds: the Go loops have none on amd64), so the
// results are the same bits.

// func normRowAVX2(y, x, gain, b *float32, n4 int, m, r float64)
// y[j] = float32((float64(x[j]) − m)·r)·gain[j] (+ b[j] when b is not nil),
// four elements at a time.
TEXT ·normRowAVX2(SB), NOSPLIT, $0-56
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ gain+16(FP), R8
	MOVQ b+24(FP), R9
	MOVQ n4+32(FP), CX
	VBROADCASTSD m+40(FP), Y14
	VBROADCASTSD r+48(FP), Y15
	TESTQ R9, R9
	JZ normRowAVX2_nob
normRowAVX2_loop:
	VCVTPS2PD (SI), Y0
	VSUBPD Y14, Y0, Y0
	VMULPD Y15, Y0, Y0
	VCVTPD2PSY Y0, X0
	VMULPS (R8), X0, X0
	VADDPS (R9), X0, X0
	VMOVUPS X0, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	ADDQ $16, R8
	ADDQ $16, R9
	DECQ CX
	JNZ normRowAVX2_loop
	VZEROUPPER
	RET
normRowAVX2_nob:
	VCVTPS2PD (SI), Y0
	VSUBPD Y14, Y0, Y0
	VMULPD Y15, Y0, Y0
	VCVTPD2PSY Y0, X0
	VMULPS (R8), X0, X0
	VMOVUPS X0, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	ADDQ $16, R8
	DECQ CX
	JNZ normRowAVX2_nob
	VZEROUPPER
	RET

// func addAVX2(y, a, b *float32, n8 int)
// y[j] = a[j] + b[j], eight elements at a time.
TEXT ·addAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n8+24(FP), CX
addAVX2_loop:
	VMOVUPS (SI), Y0
	VADDPS (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	DECQ CX
	JNZ addAVX2_loop
	VZEROUPPER
	RET

// func smearAVX2(y, x, p, s, t *float32, n8 int)
// y[j] = s[j]·x[j] + t[j]·p[j] (y[j] = s[j]·x[j] when p is nil), eight
// elements at a time.
TEXT ·smearAVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ p+16(FP), DX
	MOVQ s+24(FP), R8
	MOVQ t+32(FP), R9
	MOVQ n8+40(FP), CX
	TESTQ DX, DX
	JZ smearAVX2_first
smearAVX2_loop:
	VMOVUPS (SI), Y0
	VMULPS (R8), Y0, Y0
	VMOVUPS (DX), Y1
	VMULPS (R9), Y1, Y1
	VADDPS Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, DI
	DECQ CX
	JNZ smearAVX2_loop
	VZEROUPPER
	RET
smearAVX2_first:
	VMOVUPS (SI), Y0
	VMULPS (R8), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $32, DI
	DECQ CX
	JNZ smearAVX2_first
	VZEROUPPER
	RET

// func scale64AVX2(z *float32, n4 int, s float64)
// z[j] = float32(float64(z[j])·s), four elements at a time.
TEXT ·scale64AVX2(SB), NOSPLIT, $0-24
	MOVQ z+0(FP), DI
	MOVQ n4+8(FP), CX
	VBROADCASTSD s+16(FP), Y15
scale64AVX2_loop:
	VCVTPS2PD (DI), Y0
	VMULPD Y15, Y0, Y0
	VCVTPD2PSY Y0, X0
	VMOVUPS X0, (DI)
	ADDQ $16, DI
	DECQ CX
	JNZ scale64AVX2_loop
	VZEROUPPER
	RET

// func maxAVX2(z *float32, n8 int) (m float32, ok bool)
// m is the largest of the first 8·n8 values of z, n8 ≥ 1, and ok is
// false when one of them is a NaN. Where the largest is zero its sign
// may be wrong (VMAXPS does not order −0 and +0): the caller does not use
// a zero m.
TEXT ·maxAVX2(SB), NOSPLIT, $0-21
	MOVQ z+0(FP), SI
	MOVQ n8+8(FP), CX
	VMOVUPS (SI), Y0
	VCMPPS $3, Y0, Y0, Y1
	ADDQ $32, SI
	DECQ CX
	JZ maxAVX2_reduce
maxAVX2_loop:
	VMOVUPS (SI), Y2
	VMAXPS Y2, Y0, Y0
	VCMPPS $3, Y2, Y2, Y3
	VORPS Y3, Y1, Y1
	ADDQ $32, SI
	DECQ CX
	JNZ maxAVX2_loop
maxAVX2_reduce:
	VEXTRACTF128 $1, Y0, X2
	VMAXPS X2, X0, X0
	VSHUFPS $0x4e, X0, X0, X2
	VMAXPS X2, X0, X0
	VSHUFPS $0xb1, X0, X0, X2
	VMAXPS X2, X0, X0
	VMOVSS X0, m+16(FP)
	VMOVMSKPS Y1, AX
	TESTL AX, AX
	SETEQ ok+20(FP)
	VZEROUPPER
	RET

// EXPSHIFT8 is the body of expShiftAVX2's loop (vmath_amd64.s): Y0 ←
// exp32(Y0 − Y15) lane by lane, with R9 addressing vmathConsts; it
// overwrites Y0 and Y2–Y6.
#define EXPSHIFT8 \
	VSUBPS Y15, Y0, Y0; \
	VCMPPS $1, 0(R9), Y0, Y2; \
	VMOVUPS 32(R9), Y3; \
	VMINPS Y0, Y3, Y0; \
	VMULPS 64(R9), Y0, Y4; \
	VROUNDPS $0, Y4, Y4; \
	VMOVAPS Y0, Y5; \
	VFMADD231PS 96(R9), Y4, Y5; \
	VFMADD231PS 128(R9), Y4, Y5; \
	VMOVUPS 160(R9), Y6; \
	VFMADD213PS 192(R9), Y5, Y6; \
	VFMADD213PS 224(R9), Y5, Y6; \
	VFMADD213PS 256(R9), Y5, Y6; \
	VFMADD213PS 288(R9), Y5, Y6; \
	VFMADD213PS 320(R9), Y5, Y6; \
	VMULPS Y5, Y5, Y3; \
	VFMADD213PS Y5, Y3, Y6; \
	VADDPS 352(R9), Y6, Y6; \
	VCVTPS2DQ Y4, Y4; \
	VPADDD 384(R9), Y4, Y4; \
	VPSLLD $23, Y4, Y4; \
	VMULPS Y4, Y6, Y6; \
	VANDNPS Y6, Y2, Y0

// func expShiftMaskedAVX2(dst, src *float32, n8 int, shift float32, c *[vcN][8]float32, mask *int32)
// expShiftAVX2 over n8 vectors of eight, then, when mask is not nil, over
// one more whose lanes the eight int32 at mask select (all ones: computed
// and stored; zero: neither read nor written), in one call, so that the
// last partial vector of a short row overlaps the others.
TEXT ·expShiftMaskedAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n8+16(FP), CX
	VBROADCASTSS shift+24(FP), Y15
	MOVQ c+32(FP), R9
	MOVQ mask+40(FP), R10
	TESTQ CX, CX
	JZ expShiftMaskedAVX2_tail
expShiftMaskedAVX2_loop:
	VMOVUPS (SI), Y0
	EXPSHIFT8
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ expShiftMaskedAVX2_loop
expShiftMaskedAVX2_tail:
	TESTQ R10, R10
	JZ expShiftMaskedAVX2_done
	VMOVDQU (R10), Y14
	VMASKMOVPS (SI), Y14, Y0
	EXPSHIFT8
	VMASKMOVPS Y0, Y14, (DI)
expShiftMaskedAVX2_done:
	VZEROUPPER
	RET

// The statistics of LayerNorm for sixteen rows of x at once (rows at the
// given stride in bytes, the first 4·n4 columns, n4 ≥ 1), each row's chain
// in its own lane: four rows a vector, their four columns transposed into
// four vectors, which are added in column order, so that each lane adds
// its row's values in layerNormRow's order. rowSums16AVX2 writes the sums
// m[k] = Σ_j x_k[j]; rowSqDev16AVX2 the sums s[k] = Σ_j (x_k[j] − a[k])²,
// each difference and square rounded as the Go loop rounds them (no fused
// multiply-add).
// func rowSums16AVX2(x *float32, stride, n4 int, m *[16]float64)
TEXT ·rowSums16AVX2(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ stride+8(FP), R8
	MOVQ n4+16(FP), CX
	LEAQ (R8)(R8*2), R11
	LEAQ (SI)(R8*4), DX
	LEAQ (DX)(R8*4), R12
	LEAQ (R12)(R8*4), R13
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
rowSums16AVX2_loop:
	VMOVUPS (SI), X0
	VMOVUPS (SI)(R8*1), X1
	VMOVUPS (SI)(R8*2), X2
	VMOVUPS (SI)(R11*1), X3
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
	VMOVUPS (DX), X0
	VMOVUPS (DX)(R8*1), X1
	VMOVUPS (DX)(R8*2), X2
	VMOVUPS (DX)(R11*1), X3
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VUNPCKLPS X3, X2, X6
	VUNPCKHPS X3, X2, X7
	VMOVLHPS X6, X4, X0
	VMOVHLPS X4, X6, X1
	VMOVLHPS X7, X5, X2
	VMOVHLPS X5, X7, X3
	VCVTPS2PD X0, Y0
	VADDPD Y0, Y9, Y9
	VCVTPS2PD X1, Y1
	VADDPD Y1, Y9, Y9
	VCVTPS2PD X2, Y2
	VADDPD Y2, Y9, Y9
	VCVTPS2PD X3, Y3
	VADDPD Y3, Y9, Y9
	VMOVUPS (R12), X0
	VMOVUPS (R12)(R8*1), X1
	VMOVUPS (R12)(R8*2), X2
	VMOVUPS (R12)(R11*1), X3
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VUNPCKLPS X3, X2, X6
	VUNPCKHPS X3, X2, X7
	VMOVLHPS X6, X4, X0
	VMOVHLPS X4, X6, X1
	VMOVLHPS X7, X5, X2
	VMOVHLPS X5, X7, X3
	VCVTPS2PD X0, Y0
	VADDPD Y0, Y10, Y10
	VCVTPS2PD X1, Y1
	VADDPD Y1, Y10, Y10
	VCVTPS2PD X2, Y2
	VADDPD Y2, Y10, Y10
	VCVTPS2PD X3, Y3
	VADDPD Y3, Y10, Y10
	VMOVUPS (R13), X0
	VMOVUPS (R13)(R8*1), X1
	VMOVUPS (R13)(R8*2), X2
	VMOVUPS (R13)(R11*1), X3
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VUNPCKLPS X3, X2, X6
	VUNPCKHPS X3, X2, X7
	VMOVLHPS X6, X4, X0
	VMOVHLPS X4, X6, X1
	VMOVLHPS X7, X5, X2
	VMOVHLPS X5, X7, X3
	VCVTPS2PD X0, Y0
	VADDPD Y0, Y11, Y11
	VCVTPS2PD X1, Y1
	VADDPD Y1, Y11, Y11
	VCVTPS2PD X2, Y2
	VADDPD Y2, Y11, Y11
	VCVTPS2PD X3, Y3
	VADDPD Y3, Y11, Y11
	ADDQ $16, SI
	ADDQ $16, DX
	ADDQ $16, R12
	ADDQ $16, R13
	DECQ CX
	JNZ rowSums16AVX2_loop
	MOVQ m+24(FP), AX
	VMOVUPD Y8, (AX)
	VMOVUPD Y9, 32(AX)
	VMOVUPD Y10, 64(AX)
	VMOVUPD Y11, 96(AX)
	VZEROUPPER
	RET

// func rowSqDev16AVX2(x *float32, stride, n4 int, a, s *[16]float64)
TEXT ·rowSqDev16AVX2(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ stride+8(FP), R8
	MOVQ n4+16(FP), CX
	LEAQ (R8)(R8*2), R11
	LEAQ (SI)(R8*4), DX
	LEAQ (DX)(R8*4), R12
	LEAQ (R12)(R8*4), R13
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	MOVQ a+24(FP), AX
	VMOVUPD (AX), Y12
	VMOVUPD 32(AX), Y13
	VMOVUPD 64(AX), Y14
	VMOVUPD 96(AX), Y15
rowSqDev16AVX2_loop:
	VMOVUPS (SI), X0
	VMOVUPS (SI)(R8*1), X1
	VMOVUPS (SI)(R8*2), X2
	VMOVUPS (SI)(R11*1), X3
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VUNPCKLPS X3, X2, X6
	VUNPCKHPS X3, X2, X7
	VMOVLHPS X6, X4, X0
	VMOVHLPS X4, X6, X1
	VMOVLHPS X7, X5, X2
	VMOVHLPS X5, X7, X3
	VCVTPS2PD X0, Y0
	VSUBPD Y12, Y0, Y0
	VMULPD Y0, Y0, Y0
	VADDPD Y0, Y8, Y8
	VCVTPS2PD X1, Y1
	VSUBPD Y12, Y1, Y1
	VMULPD Y1, Y1, Y1
	VADDPD Y1, Y8, Y8
	VCVTPS2PD X2, Y2
	VSUBPD Y12, Y2, Y2
	VMULPD Y2, Y2, Y2
	VADDPD Y2, Y8, Y8
	VCVTPS2PD X3, Y3
	VSUBPD Y12, Y3, Y3
	VMULPD Y3, Y3, Y3
	VADDPD Y3, Y8, Y8
	VMOVUPS (DX), X0
	VMOVUPS (DX)(R8*1), X1
	VMOVUPS (DX)(R8*2), X2
	VMOVUPS (DX)(R11*1), X3
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VUNPCKLPS X3, X2, X6
	VUNPCKHPS X3, X2, X7
	VMOVLHPS X6, X4, X0
	VMOVHLPS X4, X6, X1
	VMOVLHPS X7, X5, X2
	VMOVHLPS X5, X7, X3
	VCVTPS2PD X0, Y0
	VSUBPD Y13, Y0, Y0
	VMULPD Y0, Y0, Y0
	VADDPD Y0, Y9, Y9
	VCVTPS2PD X1, Y1
	VSUBPD Y13, Y1, Y1
	VMULPD Y1, Y1, Y1
	VADDPD Y1, Y9, Y9
	VCVTPS2PD X2, Y2
	VSUBPD Y13, Y2, Y2
	VMULPD Y2, Y2, Y2
	VADDPD Y2, Y9, Y9
	VCVTPS2PD X3, Y3
	VSUBPD Y13, Y3, Y3
	VMULPD Y3, Y3, Y3
	VADDPD Y3, Y9, Y9
	VMOVUPS (R12), X0
	VMOVUPS (R12)(R8*1), X1
	VMOVUPS (R12)(R8*2), X2
	VMOVUPS (R12)(R11*1), X3
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VUNPCKLPS X3, X2, X6
	VUNPCKHPS X3, X2, X7
	VMOVLHPS X6, X4, X0
	VMOVHLPS X4, X6, X1
	VMOVLHPS X7, X5, X2
	VMOVHLPS X5, X7, X3
	VCVTPS2PD X0, Y0
	VSUBPD Y14, Y0, Y0
	VMULPD Y0, Y0, Y0
	VADDPD Y0, Y10, Y10
	VCVTPS2PD X1, Y1
	VSUBPD Y14, Y1, Y1
	VMULPD Y1, Y1, Y1
	VADDPD Y1, Y10, Y10
	VCVTPS2PD X2, Y2
	VSUBPD Y14, Y2, Y2
	VMULPD Y2, Y2, Y2
	VADDPD Y2, Y10, Y10
	VCVTPS2PD X3, Y3
	VSUBPD Y14, Y3, Y3
	VMULPD Y3, Y3, Y3
	VADDPD Y3, Y10, Y10
	VMOVUPS (R13), X0
	VMOVUPS (R13)(R8*1), X1
	VMOVUPS (R13)(R8*2), X2
	VMOVUPS (R13)(R11*1), X3
	VUNPCKLPS X1, X0, X4
	VUNPCKHPS X1, X0, X5
	VUNPCKLPS X3, X2, X6
	VUNPCKHPS X3, X2, X7
	VMOVLHPS X6, X4, X0
	VMOVHLPS X4, X6, X1
	VMOVLHPS X7, X5, X2
	VMOVHLPS X5, X7, X3
	VCVTPS2PD X0, Y0
	VSUBPD Y15, Y0, Y0
	VMULPD Y0, Y0, Y0
	VADDPD Y0, Y11, Y11
	VCVTPS2PD X1, Y1
	VSUBPD Y15, Y1, Y1
	VMULPD Y1, Y1, Y1
	VADDPD Y1, Y11, Y11
	VCVTPS2PD X2, Y2
	VSUBPD Y15, Y2, Y2
	VMULPD Y2, Y2, Y2
	VADDPD Y2, Y11, Y11
	VCVTPS2PD X3, Y3
	VSUBPD Y15, Y3, Y3
	VMULPD Y3, Y3, Y3
	VADDPD Y3, Y11, Y11
	ADDQ $16, SI
	ADDQ $16, DX
	ADDQ $16, R12
	ADDQ $16, R13
	DECQ CX
	JNZ rowSqDev16AVX2_loop
	MOVQ s+32(FP), AX
	VMOVUPD Y8, (AX)
	VMOVUPD Y9, 32(AX)
	VMOVUPD Y10, 64(AX)
	VMOVUPD Y11, 96(AX)
	VZEROUPPER
	RET


// func negZeroAVX2(x *float32, rows, n8, ld int) bool
// Reports whether any of the first 8·n8 elements of rows rows of x (row
// stride ld elements) has the bits of −0, eight elements at a time.
TEXT ·negZeroAVX2(SB), NOSPLIT, $0-33
	MOVQ x+0(FP), SI
	MOVQ rows+8(FP), CX
	MOVQ n8+16(FP), DX
	MOVQ ld+24(FP), BX
	SHLQ $2, BX
	MOVQ $0x80000000, AX
	MOVQ AX, X1
	VPBROADCASTD X1, Y1
	VPXOR Y2, Y2, Y2
negZeroAVX2_row:
	MOVQ SI, DI
	MOVQ DX, R8
negZeroAVX2_col:
	VPCMPEQD (DI), Y1, Y0
	VPOR Y0, Y2, Y2
	ADDQ $32, DI
	DECQ R8
	JNZ negZeroAVX2_col
	ADDQ BX, SI
	DECQ CX
	JNZ negZeroAVX2_row
	VPTEST Y2, Y2
	SETNE ret+32(FP)
	VZEROUPPER
	RET
