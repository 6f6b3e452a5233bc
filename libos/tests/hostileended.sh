# A holder the kernel ends (issue 25, libos/tests/c/hostile.c): a child
# holding the only other end of a pipe is ended by env_destroy while it
# sleeps, so lxrt's exit path never closes its descriptors; the reader
# must see EOF and the writer EPIPE instead of waiting for good.
# veneer-only
/cbin/hostile ended
