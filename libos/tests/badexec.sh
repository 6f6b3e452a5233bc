# Broken dynamic programs and interpreters are refused by execve with a
# specific errno each, and the caller goes on (libos/tests/c/badexec.c).
# with: libc6
# veneer-only
cbin/badexec /cbin/dynhello
