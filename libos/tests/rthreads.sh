# Rust std threads (libos/tests/rust/rthreads.rs, built the default way by
# xtask: static-PIE for musl and dynamic for glibc): Mutex and join over 8
# threads, mpsc from 4 senders, Condvar, thread_local!, a named thread, a
# panicking thread's join.
# with: libc6 libgcc-s1
for flavour in musl glibc; do
	cbin/rthreads-$flavour
	echo "$flavour status $?"
done
