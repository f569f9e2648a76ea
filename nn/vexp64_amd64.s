// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

//go:build !purego

#include "textflag.h"

// func expDiffsAVX2(dst *float64, src *float32, n4 int, shift float64, c *[veN][4]float64) int
//
// Four lanes of math/exp_amd64.s's archExp (its AVX+FMA path), operation
// for operation, on float64(src[j]) − shift. It stops before the first
// group of four with a lane whose 2ⁿ is not a normal number (which covers
// the arguments that are not finite or overflow) and returns the number of
// groups done. R9 addresses ve64: constant i is the four lanes at
// 32·i(R9).
TEXT ·expDiffsAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n4+16(FP), CX
	VBROADCASTSD shift+24(FP), Y15
	MOVQ c+32(FP), R9
	XORQ BX, BX
	MOVL $1023, AX
	VMOVD AX, X14
	VPBROADCASTD X14, X14
	MOVL $2047, AX
	VMOVD AX, X12
	VPBROADCASTD X12, X12
	VPXOR X13, X13, X13
	TESTQ CX, CX
	JEQ expDiffsAVX2_done
expDiffsAVX2_loop:
	VCVTPS2PD (SI), Y0
	VSUBPD Y15, Y0, Y0
	VMULPD 0(R9), Y0, Y1
	VCVTPD2DQY Y1, X2
	VCVTDQ2PD X2, Y1
	// the exponent's bias added; every lane's must be in [1, 2046]
	VPADDD X14, X2, X2
	VPCMPGTD X13, X2, X3
	VPCMPGTD X2, X12, X4
	VPAND X4, X3, X3
	VMOVMSKPS X3, AX
	CMPL AX, $15
	JNE expDiffsAVX2_done
	VFNMADD231PD 32(R9), Y1, Y0
	VFNMADD231PD 64(R9), Y1, Y0
	VMULPD 96(R9), Y0, Y0
	VMOVUPD 128(R9), Y1
	VFMADD213PD 160(R9), Y0, Y1
	VFMADD213PD 192(R9), Y0, Y1
	VFMADD213PD 224(R9), Y0, Y1
	VFMADD213PD 256(R9), Y0, Y1
	VFMADD213PD 288(R9), Y0, Y1
	VFMADD213PD 320(R9), Y0, Y1
	VFMADD213PD 352(R9), Y0, Y1
	VMULPD Y1, Y0, Y0
	VADDPD 384(R9), Y0, Y1
	VMULPD Y1, Y0, Y0
	VADDPD 384(R9), Y0, Y1
	VMULPD Y1, Y0, Y0
	VADDPD 384(R9), Y0, Y1
	VMULPD Y1, Y0, Y0
	VADDPD 384(R9), Y0, Y1
	VFMADD213PD 352(R9), Y1, Y0
	// times 2ⁿ, built from the biased exponent's bits
	VPMOVSXDQ X2, Y3
	VPSLLQ $52, Y3, Y3
	VMULPD Y3, Y0, Y0
	VMOVUPD Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	INCQ BX
	DECQ CX
	JNZ expDiffsAVX2_loop
expDiffsAVX2_done:
	MOVQ BX, ret+40(FP)
	VZEROUPPER
	RET
