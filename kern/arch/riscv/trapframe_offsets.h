// Byte offsets into struct Trapframe (kern/proc/proc.h) for trampoline.S. proc.cc
// static_asserts that each matches the struct.
#pragma once

#define TRAPFRAME_VA 0x3fffffe000  // mem::TRAPFRAME = MAXVA - 2 pages
#define TF_KERNEL_SATP 0
#define TF_KERNEL_SP 8
#define TF_KERNEL_TRAP 16
#define TF_EPC 24
#define TF_KERNEL_HARTID 32
#define TF_RA 40
#define TF_SP 48
#define TF_GP 56
#define TF_TP 64
#define TF_T0 72
#define TF_T1 80
#define TF_T2 88
#define TF_S0 96
#define TF_S1 104
#define TF_A0 112
#define TF_A1 120
#define TF_A2 128
#define TF_A3 136
#define TF_A4 144
#define TF_A5 152
#define TF_A6 160
#define TF_A7 168
#define TF_S2 176
#define TF_S3 184
#define TF_S4 192
#define TF_S5 200
#define TF_S6 208
#define TF_S7 216
#define TF_S8 224
#define TF_S9 232
#define TF_S10 240
#define TF_S11 248
#define TF_T3 256
#define TF_T4 264
#define TF_T5 272
#define TF_T6 280
