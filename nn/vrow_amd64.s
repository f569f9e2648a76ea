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
