//go:build amd64 && !purego

#include "textflag.h"

// Offsets in ·avx2Consts (exp_amd64.go), 32 bytes (4 float64) each.
#define C_INVLN2T 0
#define C_SHIFT 32
#define C_LN2HIT 64
#define C_LN2LOT 96
#define C_C2 128
#define C_C6 160
#define C_C24 192
#define C_C120 224
#define C_ONE 256
#define C_LO 288
#define C_HI 320
#define C_IDXMASK 352
#define C_SIGN 384

// func sigmoidAddAVX2(out, x, th []float64) int
//
// Each step mirrors an operation of Exp (exp.go) and Sigmoid (mathx.go):
// the same IEEE operations on the same operands in the same order, without
// FMA, so every lane gets the bits of the scalar code. Exp's 2^m is added
// to the bits of y as m<<52: the scalar takes m = n>>8 from n = the low 32
// bits of kd as int32, here the 64-bit lane of kd is shifted logically;
// both put bits 8..19 of k (the low 51 bits of kd's bits hold k in two's
// complement) at bits 52..63, the only bits of m the shift by 52 keeps.
// The table is read by four scalar loads, their indices passed through the
// stack frame: VGATHERQPD made the loop 2.2 times slower, and moving the
// indices to registers by VMOVQ/VPEXTRQ 10 % slower, on the Xeon
// (Skylake-SP/Cascade Lake, model 85) where this was measured.
TEXT ·sigmoidAddAVX2(SB), NOSPLIT, $32-80
	MOVQ out_base+0(FP), DI
	MOVQ out_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ th_base+48(FP), DX
	LEAQ ·avx2Consts(SB), R9
	LEAQ ·exp2Table(SB), R8
	VMOVUPD C_INVLN2T(R9), Y7
	VMOVUPD C_SHIFT(R9), Y8
	VMOVUPD C_LN2HIT(R9), Y9
	VMOVUPD C_LN2LOT(R9), Y10
	VMOVUPD C_C2(R9), Y11
	VMOVUPD C_C6(R9), Y12
	VMOVUPD C_C24(R9), Y13
	VMOVUPD C_C120(R9), Y14
	VMOVUPD C_ONE(R9), Y15
	XORQ AX, AX                     // elements done
	SUBQ $4, CX                     // last start of a full group
	JLT  done

loop:
	VMOVUPD (SI)(AX*8), Y0
	VADDPD  (DX)(AX*8), Y0, Y0      // a = x + th
	VCMPPD  $0x1e, C_LO(R9), Y0, Y1 // a > -709.78 (GT_OQ: false for NaN)
	VCMPPD  $0x11, C_HI(R9), Y0, Y2 // a < 708 (LT_OQ)
	VANDPD  Y1, Y2, Y1
	VMOVMSKPD Y1, BX
	CMPQ BX, $15
	JNE  done                       // a lane for math.Exp: the caller does it
	VXORPD  C_SIGN(R9), Y0, Y0      // z = -a, the argument of Exp
	VMULPD  Y7, Y0, Y1
	VADDPD  Y8, Y1, Y1              // kd = z·(256/ln2) + shift
	VANDPD  C_IDXMASK(R9), Y1, Y2   // j = k & 255
	VMOVDQU Y2, (SP)                // the 4 indices, read back as integers
	MOVQ    0(SP), R10
	MOVQ    8(SP), R11
	MOVQ    16(SP), R12
	MOVQ    24(SP), R13
	VMOVSD  (R8)(R10*8), X4
	VMOVHPD (R8)(R11*8), X4, X4
	VMOVSD  (R8)(R12*8), X6
	VMOVHPD (R8)(R13*8), X6, X6
	VINSERTF128 $1, X6, Y4, Y4      // t = 2^(j/256)
	VPSRLQ  $8, Y1, Y5
	VPSLLQ  $52, Y5, Y5             // m<<52
	VSUBPD  Y8, Y1, Y1              // kd = k
	VMULPD  Y9, Y1, Y2
	VSUBPD  Y2, Y0, Y0
	VMULPD  Y10, Y1, Y2
	VSUBPD  Y2, Y0, Y0              // r = z - k·ln2HiT - k·ln2LoT
	VMULPD  Y0, Y0, Y1              // r2
	VMULPD  Y12, Y0, Y2
	VADDPD  Y11, Y2, Y2
	VMULPD  Y2, Y1, Y2              // r2·(1/2 + r·(1/6))
	VMULPD  Y14, Y0, Y3
	VADDPD  Y13, Y3, Y3
	VMULPD  Y1, Y1, Y1
	VMULPD  Y3, Y1, Y3              // r2·r2·(1/24 + r·(1/120))
	VADDPD  Y2, Y0, Y0
	VADDPD  Y3, Y0, Y0              // q = r + … + …
	VMULPD  Y4, Y0, Y0
	VADDPD  Y4, Y0, Y0              // y = t + t·q
	VPADDQ  Y5, Y0, Y0              // e^z = 2^m·y
	VADDPD  Y15, Y0, Y0             // 1 + e^z
	VDIVPD  Y0, Y15, Y0             // 1/(1 + e^z)
	VMOVUPD Y0, (DI)(AX*8)
	ADDQ $4, AX
	CMPQ AX, CX
	JLE  loop

done:
	VZEROUPPER
	MOVQ AX, ret+72(FP)
	RET
