# mprotect(PROT_NONE) of touched pages: SIGSEGV SEGV_ACCERR on read, write
# and run, EFAULT from read(2)/write(2), inherited by fork, the bytes back
# after mprotect, munmap (libos/tests/c/protnone.c).
cbin/protnone
echo "protnone: $?"
