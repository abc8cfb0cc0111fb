//go:build amd64 && !purego

#include "textflag.h"

// Offsets in ·sgdConsts (sgd_amd64.go), 32 bytes (4 lanes) each.
#define C_ABS 0
#define C_ONE 32
#define C_MONE 64

// PENALTY turns the direction d in Y1 into g = d − (l2·x + l1·sign x) for
// the weights x in Y0, as sgdShadowGo: sign x = 1 if x > 0, −1 if x < 0,
// else +0 (NaN too), each product rounded, then the sum, then the
// difference. Y8 = 0, Y9 = −1, Y10 = 1, Y13 = l1, Y14 = l2; uses Y2, Y3.
#define PENALTY \
	VCMPPD $0x1e, Y8, Y0, Y2 \
	VCMPPD $0x11, Y8, Y0, Y3 \
	VANDPD Y10, Y2, Y2 \
	VANDPD Y9, Y3, Y3 \
	VORPD  Y3, Y2, Y2 \
	VMULPD Y13, Y2, Y2 \
	VMULPD Y14, Y0, Y3 \
	VADDPD Y2, Y3, Y3 \
	VSUBPD Y3, Y1, Y1

// TAILMASKS sets, for rows of n = R10 weights, Y5 and X4 to the masks of
// the last n mod 4 weights of a row as float64 and as float32 lanes
// (sgdTail64, sgdTail32) and CX to n rounded down to a multiple of 4;
// uses AX, R11.
#define TAILMASKS \
	MOVQ    R10, AX \
	ANDQ    $3, AX \
	MOVQ    AX, CX \
	SHLQ    $5, AX \
	LEAQ    ·sgdTail64(SB), R11 \
	VMOVDQU (R11)(AX*1), Y5 \
	SHLQ    $4, CX \
	LEAQ    ·sgdTail32(SB), R11 \
	VMOVDQU (R11)(CX*1), X4 \
	MOVQ    R10, CX \
	ANDQ    $-4, CX

// ROWSUM stores (l0 + l1) + (l2 + l3) of the lanes of Y6 at (R8) and
// advances R8 to the next row's entry; uses X2.
#define ROWSUM \
	VEXTRACTF128 $1, Y6, X2 \
	VHADDPD      X2, X6, X2 \
	VHADDPD      X2, X2, X2 \
	VMOVSD       X2, (R8) \
	ADDQ         $8, R8

// func sgdShadowAVX2(w, d []float64, w32 []float32, absRow []float64, rows, n int, lr, l2, l1, lim float64, pen bool) (first int, s float64)
//
// The operations of sgdShadowGo on four weights of a row at a time, in
// the same order, without FMA, so that every lane gets the bits of the
// Go code: lane j of Y7 (Σ g²) and of Y6 (Σ |x_new| of the row) sums the
// elements k ≡ j (mod 4) of the rows, as the Go lanes. The last n mod 4
// weights of a row are loaded and stored under the mask Y5 (X4 for the
// float32 shadow); outside it g and |x_new| are set to +0, which leaves
// the sums as they are (they start at +0 and only add values ≥ +0 or
// NaN). Registers: SI, DI, DX the rows of w, d, w32; R8 absRow; R9 rows
// left; R10 n; CX n rounded down to a multiple of 4; R11 k; R12 first;
// R13 the index in w of the row's first weight; BX bit 0 penalties, bit 1
// shadow. The loop prefetches w and d 1 KiB ahead: in the trainer (W
// of 784×500, read from memory) this made the kernel about 20 % faster
// (perf, PCD epoch over Fashion-MNIST, 0.40 instead of 0.51 CPU-s;
// 512 bytes and 2 KiB ahead were as good or worse); a prefetch beyond the
// arrays does not fault.
TEXT ·sgdShadowAVX2(SB), NOSPLIT, $0-168
	MOVQ    w_base+0(FP), SI
	MOVQ    d_base+24(FP), DI
	MOVQ    w32_base+48(FP), DX
	MOVQ    absRow_base+72(FP), R8
	MOVQ    rows+96(FP), R9
	MOVQ    n+104(FP), R10
	MOVBQZX pen+144(FP), BX
	MOVQ    w32_len+56(FP), AX
	TESTQ   AX, AX
	JEQ     flags
	ORQ     $2, BX

flags:
	VBROADCASTSD lr+112(FP), Y15
	VBROADCASTSD l2+120(FP), Y14
	VBROADCASTSD l1+128(FP), Y13
	VBROADCASTSD lim+136(FP), Y12
	LEAQ    ·sgdConsts(SB), AX
	VMOVUPD C_ABS(AX), Y11
	VMOVUPD C_ONE(AX), Y10
	VMOVUPD C_MONE(AX), Y9
	VXORPD  Y8, Y8, Y8
	VXORPD  Y7, Y7, Y7
	TAILMASKS
	MOVQ    $-1, R12
	XORQ    R13, R13
	TESTQ   R9, R9
	JEQ     end

row:
	VXORPD Y6, Y6, Y6
	XORQ   R11, R11
	CMPQ   R11, CX
	JGE    tail

group:
	PREFETCHT0 1024(SI)(R11*8)
	PREFETCHT0 1024(DI)(R11*8)
	VMOVUPD (SI)(R11*8), Y0         // x
	VMOVUPD (DI)(R11*8), Y1         // g = d
	TESTQ   $1, BX
	JEQ     groupstep
	PENALTY

groupstep:
	VMULPD    Y1, Y1, Y2
	VADDPD    Y2, Y7, Y7            // Σ g²
	VMULPD    Y15, Y1, Y2
	VADDPD    Y2, Y0, Y0            // x_new = x + lr·g
	VMOVUPD   Y0, (DI)(R11*8)
	VANDPD    Y11, Y0, Y1           // |x_new|
	VCMPPD    $0x12, Y12, Y1, Y2    // |x_new| ≤ lim (LE_OQ: false for NaN)
	VMOVMSKPD Y2, AX
	CMPQ      AX, $15
	JNE       groupbad

groupok:
	TESTQ      $2, BX
	JEQ        groupnext
	VADDPD     Y1, Y6, Y6           // Σ |x_new|
	VCVTPD2PSY Y0, X3
	VMOVUPS    X3, (DX)(R11*4)

groupnext:
	ADDQ $4, R11
	CMPQ R11, CX
	JLT  group

tail:
	CMPQ       R11, R10
	JEQ        rowend
	VMASKMOVPD (SI)(R11*8), Y5, Y0
	VMASKMOVPD (DI)(R11*8), Y5, Y1
	TESTQ      $1, BX
	JEQ        tailstep
	PENALTY

tailstep:
	VANDPD     Y5, Y1, Y1           // g, +0 outside the row
	VMULPD     Y1, Y1, Y2
	VADDPD     Y2, Y7, Y7
	VMULPD     Y15, Y1, Y2
	VADDPD     Y2, Y0, Y0
	VMASKMOVPD Y0, Y5, (DI)(R11*8)
	VANDPD     Y11, Y0, Y1
	VANDPD     Y5, Y1, Y1           // |x_new|, +0 outside the row
	VCMPPD     $0x12, Y12, Y1, Y2
	VANDNPD    Y5, Y2, Y2           // the row's lanes not ≤ lim
	VMOVMSKPD  Y2, AX
	TESTQ      AX, AX
	JNE        tailbad

tailok:
	TESTQ      $2, BX
	JEQ        rowend
	VADDPD     Y1, Y6, Y6
	VCVTPD2PSY Y0, X3
	VMASKMOVPS X3, X4, (DX)(R11*4)

rowend:
	TESTQ        $2, BX
	JEQ          rownext
	ROWSUM

rownext:
	LEAQ (SI)(R10*8), SI
	LEAQ (DI)(R10*8), DI
	LEAQ (DX)(R10*4), DX
	ADDQ R10, R13
	DECQ R9
	JNE  row

end:
	VEXTRACTF128 $1, Y7, X2
	VHADDPD      X2, X7, X2
	VHADDPD      X2, X2, X2
	VMOVSD       X2, s+160(FP)
	MOVQ         R12, first+152(FP)
	VZEROUPPER
	RET

groupbad:
	TESTQ R12, R12
	JGE   groupok                   // an earlier weight was the first
	XORQ  $15, AX
	BSFQ  AX, AX
	ADDQ  R11, AX
	ADDQ  R13, AX
	MOVQ  AX, R12
	JMP   groupok

tailbad:
	TESTQ R12, R12
	JGE   tailok
	BSFQ  AX, AX
	ADDQ  R11, AX
	ADDQ  R13, AX
	MOVQ  AX, R12
	JMP   tailok

// func shadowAVX2(w []float64, w32 []float32, absRow []float64, rows, n int)
//
// The float32 shadow and the row sums of shadowRow, on every row of n
// weights of w, with the lanes and the masks of sgdShadowAVX2 (the masked
// lanes load +0, whose magnitude leaves the sums as they are).
TEXT ·shadowAVX2(SB), NOSPLIT, $0-88
	MOVQ    w_base+0(FP), SI
	MOVQ    w32_base+24(FP), DX
	MOVQ    absRow_base+48(FP), R8
	MOVQ    rows+72(FP), R9
	MOVQ    n+80(FP), R10
	LEAQ    ·sgdConsts(SB), AX
	VMOVUPD C_ABS(AX), Y11
	TAILMASKS
	TESTQ   R9, R9
	JEQ     done

row:
	VXORPD Y6, Y6, Y6
	XORQ   R11, R11
	CMPQ   R11, CX
	JGE    tail

group:
	VMOVUPD    (SI)(R11*8), Y0
	VANDPD     Y11, Y0, Y1
	VADDPD     Y1, Y6, Y6
	VCVTPD2PSY Y0, X3
	VMOVUPS    X3, (DX)(R11*4)
	ADDQ       $4, R11
	CMPQ       R11, CX
	JLT        group

tail:
	CMPQ       R11, R10
	JEQ        rowend
	VMASKMOVPD (SI)(R11*8), Y5, Y0
	VANDPD     Y11, Y0, Y1
	VADDPD     Y1, Y6, Y6
	VCVTPD2PSY Y0, X3
	VMASKMOVPS X3, X4, (DX)(R11*4)

rowend:
	ROWSUM
	LEAQ (SI)(R10*8), SI
	LEAQ (DX)(R10*4), DX
	DECQ R9
	JNE  row

done:
	VZEROUPPER
	RET
