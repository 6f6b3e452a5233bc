# A thread blocked in a pipe read whose buffer a sibling unmaps answers
# EFAULT, or the count it could copy, as Linux does; the rest stays in
# the pipe and the thread is joined (libos/tests/c/unmapread.c).
cbin/unmapread
