# Pipe sizes past /proc/sys/fs/pipe-max-size: root may, nobody may not
# (libos/tests/c/pipemax.c, which checks itself: a host container's root
# lacks CAP_SYS_RESOURCE, so there is nothing to compare with).
# veneer-only
cbin/pipemax
