# The random writer (issue 25, libos/tests/c/hostile.c): a process of user
# 1000 writes random bytes over every page of the shared arena it can
# write, seed after seed, each in a fresh child; root's pipe and file are
# unchanged and the system goes on.
# veneer-only
/cbin/hostile scribble
