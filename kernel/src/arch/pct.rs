//! The fast path of protected control transfer (paper 001 §4.6). Aegis
//! transferred control in a few tens of instructions by never leaving
//! assembly; so does this. The `PCT` entry of the system-call table points
//! here, with the arguments still in registers: `rdi` = target, `rsi` =
//! flags, and the message in `rdx r8 r9 r10 rbx rbp r12-r15`, which this
//! path never touches. It handles the common cases — a call with no
//! credential and no grant into an open, unguarded entry point, or a reply
//! to an environment waiting on the caller — and hands everything else,
//! with the arguments intact, to the general path (`syscall::cpu::pct`).

use crate::arch::frame::TrapFrame;
use crate::arch::gdt::{USER_CS, USER_SS};
use crate::arch::percpu::PerCpu;
use crate::env::{offsets as env_offsets, Env};
use abi::tables::{env_state, EnvInfo};
use core::mem::{offset_of, size_of};

core::arch::global_asm!(
    r#"
    .section .text
    .global pct_fast
pct_fast:
    testq $-2, %rsi
    jnz 9f
    movl %edi, %eax
    cmpq %rdi, %rax
    jne 9f
    andl ${slots_mask}, %eax
    imulq ${env_size}, %rax, %r11
    leaq {envs}(%rip), %rcx
    addq %rcx, %r11
    cmpl %edi, {id}(%r11)
    jne 9f
    movzwl {kernel}+{current}(%rip), %ecx
    cmpq %rcx, %rax
    je 9f
    cmpl ${waiting}, {state}(%r11)
    je 5f
    /* A call: into the open, unguarded entry point of a runnable one. */
    cmpl ${runnable}, {state}(%r11)
    jne 9f
    cmpq $0, {entry}(%r11)
    je 9f
    cmpl $0, {guard}(%r11)
    jne 9f
    movq {entry}(%r11), %rdi
    movq %rdi, %gs:{to_rip}
    movq {stack}(%r11), %rdi
    movq %rdi, %gs:{to_rsp}
    movq $0x202, %gs:{to_rflags}
    jmp 6f
    /* A reply: the target resumes after its own synchronous call. */
5:  cmpw %cx, {waiting_on}(%r11)
    jne 9f
    movw $0xffff, {waiting_on}(%r11)
    movl ${runnable}, {state}(%r11)
    movq {kernel}+{info}(%rip), %rdi
    shlq ${info_shift}, %rax
    movl ${runnable}, {info_state}(%rdi, %rax)
    movl $-1, {info_waiting}(%rdi, %rax)
    shrq ${info_shift}, %rax
    movq {tf_rip}(%r11), %rdi
    movq %rdi, %gs:{to_rip}
    movq {tf_rsp}(%r11), %rdi
    movq %rdi, %gs:{to_rsp}
    movq {tf_rflags}(%r11), %rdi
    movq %rdi, %gs:{to_rflags}
    /* Committed. rax = target slot, r11 = target, rcx = caller slot. */
6:  testb $1, %sil
    jz 7f
    movq {kernel}+{info}(%rip), %rdi
    shlq ${info_shift}, %rcx
    movl ${waiting}, {info_state}(%rdi, %rcx)
    movl %eax, {info_waiting}(%rdi, %rcx)
    shrq ${info_shift}, %rcx
7:  imulq ${env_size}, %rcx, %rdi
    leaq {envs}(%rip), %rcx
    addq %rcx, %rdi
    testb $1, %sil
    jz 8f
    movw %ax, {waiting_on}(%rdi)
    movb $1, {awaited}(%r11)
    movl ${waiting}, {state}(%rdi)
8:  movq $0, {tf_rax}(%rdi)
    incl {switched_out}(%rdi)
    movl {id}(%rdi), %esi
    fxsave64 {fpu}(%rdi)
    rdfsbase %rcx
    movq %rcx, {fs}(%rdi)
    /* Both gs bases within one SWAPGS pair (no gs-relative access). */
    swapgs
    rdgsbase %rcx
    movq %rcx, {gs}(%rdi)
    movq {gs}(%r11), %rcx
    wrgsbase %rcx
    swapgs
    fxrstor64 {fpu}(%r11)
    movq {fs}(%r11), %rcx
    wrfsbase %rcx
    movq {cr3}(%r11), %rcx
    movq %rcx, %cr3
    movq %r11, %gs:{cur_tf}
    leaq {tf_size}(%r11), %rcx
    movq %rcx, {tss}+{rsp0}(%rip)
    movw %ax, {kernel}+{current}(%rip)
    /* Enter the target with the message registers as they are. */
    movq %gs:{kstack_top}, %rsp
    pushq ${user_ss}
    pushq %gs:{to_rsp}
    pushq %gs:{to_rflags}
    pushq ${user_cs}
    pushq %gs:{to_rip}
    movq %rsi, %rax
    movq $-1, %rcx
    xorl %edi, %edi
    xorl %esi, %esi
    xorl %r11d, %r11d
    swapgs
    iretq
    /* Anything else: the general path, arguments restored. */
9:  movq %r10, %rcx
    jmp {general}
    "#,
    slots_mask = const abi::tables::ENV_SLOTS - 1,
    env_size = const size_of::<Env>(),
    envs = sym crate::env::ENVS,
    kernel = sym crate::state::KERNEL,
    current = const crate::state::offsets::CURRENT,
    info = const crate::state::offsets::ENV_INFO,
    id = const env_offsets::ID,
    state = const env_offsets::STATE,
    waiting_on = const env_offsets::WAITING_ON,
    awaited = const env_offsets::AWAITED,
    entry = const offset_of!(Env, pct_entry),
    stack = const offset_of!(Env, pct_stack),
    guard = const offset_of!(Env, pct_guard),
    switched_out = const env_offsets::SWITCHED_OUT,
    fpu = const offset_of!(Env, fpu),
    fs = const offset_of!(Env, fs_base),
    gs = const offset_of!(Env, gs_base),
    cr3 = const offset_of!(Env, cr3),
    tf_rax = const offset_of!(TrapFrame, rax),
    tf_rip = const offset_of!(TrapFrame, rip),
    tf_rsp = const offset_of!(TrapFrame, rsp),
    tf_rflags = const offset_of!(TrapFrame, rflags),
    tf_size = const size_of::<TrapFrame>(),
    info_state = const offset_of!(EnvInfo, state),
    info_waiting = const offset_of!(EnvInfo, waiting_on),
    info_shift = const size_of::<EnvInfo>().trailing_zeros(),
    tss = sym crate::arch::gdt::TSS,
    runnable = const env_state::RUNNABLE,
    waiting = const env_state::WAITING,
    user_cs = const USER_CS,
    user_ss = const USER_SS,
    general = sym crate::syscall::pct_general,
    kstack_top = const offset_of!(PerCpu, kstack_top),
    cur_tf = const offset_of!(PerCpu, cur_tf),
    rsp0 = const offset_of!(crate::arch::gdt::Tss, rsp),
    to_rip = const offset_of!(PerCpu, pct_rip),
    to_rsp = const offset_of!(PerCpu, pct_rsp),
    to_rflags = const offset_of!(PerCpu, pct_rflags),
    options(att_syntax)
);

const _: () = assert!(size_of::<EnvInfo>().is_power_of_two(), "pct_fast indexes the table with a shift");
const _: () = assert!(offset_of!(Env, tf) == 0, "pct_fast uses the environment as its frame");

unsafe extern "sysv64" {
    /// The assembly routine above, as a system-call table entry.
    pub fn pct_fast(a0: u64, a1: u64, a2: u64, a3: u64, a4: u64, a5: u64) -> i64;
}
