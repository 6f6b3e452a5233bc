# Dying inside the library (issue 25, libos/tests/c/hostile.c): workers
# of user 1000 making pipe, file, select and fork calls are ended at
# random points, by SIGKILL and by the kernel's env_destroy (which ends an
# environment wherever it is, inside a critical section too); the others
# go on, root's pipe and file are unchanged.
# veneer-only
/cbin/hostile kill
