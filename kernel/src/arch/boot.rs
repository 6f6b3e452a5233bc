//! The boot path: Multiboot2 header, PVH ELF note, and the 32-to-64-bit
//! trampoline that both loaders enter.
//!
//! QEMU's `-kernel` finds the PVH note (Xen's `PHYS32_ENTRY`) and enters in
//! 32-bit protected mode with `ebx` pointing at `hvm_start_info`; GRUB finds
//! the Multiboot2 header and enters the same way with `eax` holding the
//! Multiboot2 magic. The trampoline identity-maps the first 4 GiB, maps the
//! kernel at -2 GiB, enables long mode and calls `kmain(eax, ebx)`, which
//! tells the two protocols apart.

core::arch::global_asm!(
    r#"
    .section .boot.header, "a"
    .balign 8
mb2_header_start:
    .long 0xE85250D6
    .long 0
    .long mb2_header_end - mb2_header_start
    .long -(0xE85250D6 + (mb2_header_end - mb2_header_start))
    .short 0
    .short 0
    .long 8
mb2_header_end:

    .section .note.Xen, "a"
    .balign 4
    .long 4
    .long 8
    .long 18
    .asciz "Xen"
    .balign 4
    .quad _start32

    .section .boot.data, "aw"
    .balign 4096
boot_pml4:    .skip 4096
boot_pdpt_lo: .skip 4096
boot_pdpt_hi: .skip 4096
boot_pd:      .skip 4096 * 4
boot_gdt:
    .quad 0
    .quad 0x00AF9A000000FFFF
    .quad 0x00CF92000000FFFF
boot_gdt_ptr:
    .short 23
    .long boot_gdt

    .section .boot.text, "ax"
    .code32
    .global _start32
_start32:
    cli
    cld
    movl %eax, %edi
    movl %ebx, %esi
    /* Identity map 0..4 GiB with 2 MiB pages. */
    xorl %ecx, %ecx
1:  movl %ecx, %eax
    shll $21, %eax
    orl $0x83, %eax
    movl %eax, boot_pd(,%ecx,8)
    movl %ecx, %eax
    shrl $11, %eax
    movl %eax, boot_pd+4(,%ecx,8)
    incl %ecx
    cmpl $2048, %ecx
    jne 1b
    movl $boot_pd + 0x0003, boot_pdpt_lo
    movl $boot_pd + 0x1003, boot_pdpt_lo + 8
    movl $boot_pd + 0x2003, boot_pdpt_lo + 16
    movl $boot_pd + 0x3003, boot_pdpt_lo + 24
    /* -2 GiB maps the first physical GiB (the kernel is at 1 MiB). */
    movl $boot_pd + 3, boot_pdpt_hi + 510 * 8
    movl $boot_pdpt_lo + 3, boot_pml4
    movl $boot_pdpt_hi + 3, boot_pml4 + 511 * 8
    movl $boot_pml4, %eax
    movl %eax, %cr3
    movl %cr4, %eax
    orl $0x20, %eax
    movl %eax, %cr4
    movl $0xC0000080, %ecx
    rdmsr
    orl $0x900, %eax
    wrmsr
    movl %cr0, %eax
    orl $0x80010001, %eax
    movl %eax, %cr0
    lgdt boot_gdt_ptr
    ljmp $0x08, $start64_low

    .code64
start64_low:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movw %ax, %fs
    movw %ax, %gs
    movabsq $_start64, %rax
    jmp *%rax

    .section .text
_start64:
    movq %rdi, %r12
    movq %rsi, %r13
    leaq __bss_start(%rip), %rdi
    leaq __bss_end(%rip), %rcx
    subq %rdi, %rcx
    xorl %eax, %eax
    rep stosb
    leaq boot_stack_top(%rip), %rsp
    xorl %ebp, %ebp
    movl %r12d, %edi
    movl %r13d, %esi
    call {kmain}
    ud2

    .section .bss
    .balign 16
boot_stack:
    .skip 262144
    .global boot_stack_top
boot_stack_top:
    "#,
    kmain = sym crate::kmain,
    options(att_syntax)
);
