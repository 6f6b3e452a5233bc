# File mappings of boot files map the archive's own frames (issue 26,
# libos/tests/c/bootmap.c): a process of user 1000 maps root's 0644
# /tests/bootmap.dat privately and writes every page of its mapping; the
# file, a fresh mapping of it and root's mappings keep the archive's bytes;
# a writable shared mapping is refused (EACCES, as on Linux), and making a
# read-only shared one writable lets no write reach the file.
# veneer-only
/cbin/bootmap /tests/bootmap.dat
