# Rust std threads (libos/tests/rust/rthreads.rs, built static for musl by
# xtask): Mutex and join over 8 threads, mpsc from 4 senders, Condvar,
# thread_local!, a named thread, a panicking thread's join.
cbin/rthreads
echo "rthreads: $?"
