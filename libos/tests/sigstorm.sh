# A child signals its parent in a loop while the parent's handler writes
# (libos/tests/c/sigstorm.c): the handler sees the sender's pid, and the
# rest of the machine goes on (an uninvolved alarm fires on time, a
# SIGKILL from another process takes effect).
cbin/sigstorm
