# glibc's internal signals: pthread_cancel (SIGCANCEL) of threads in
# pause, read, sleep, a condition wait and an asynchronous spin, with their
# cleanup handlers; setuid/setgid in a threaded program (SIGSETXID to
# every thread). Dynamic (libos/tests/c/cancel.c, whose unwinder glibc
# loads from libgcc_s) and static (cancelst.c).
# with: libc6 libgcc-s1
for p in cancel cancelst; do
	cbin/$p
	echo "$p: $?"
done
