# vfork and posix_spawn (libos/tests/c/spawn.c): a missing program's
# error reported, file actions, vfork with _exit, execve and a failing
# execve, clone(CLONE_VM|CLONE_VFORK); glibc static and dynamic, and
# musl's through Rust's Command (lx_rcommand).
# with: libc6
for p in spawn spawndyn; do
	cbin/$p
	echo "$p: $?"
done
