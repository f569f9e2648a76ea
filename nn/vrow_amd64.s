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
