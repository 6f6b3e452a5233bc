/* cflags: -nostdlib -Wl,--build-id=none -Wl,-z,noseparate-code -fno-asynchronous-unwind-tables */
/*
 * The program `fork_exec` and `vfork_exec` execute.  It has no C library:
 * glibc's static start-up alone costs more than the fork and exec being
 * measured.  Linked as one read+execute segment at 0x400000, the program
 * Veneer's side builds and executes (libos/src/bin/bench_libos.rs).
 */
void _start(void)
{
	__asm__ volatile("mov $60, %eax\n\txor %edi, %edi\n\tsyscall");
}
