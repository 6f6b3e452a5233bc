# glibc's clock calls through the vDSO (libos/tests/c/vdso.c).
# with: libc6
cbin/vdso
