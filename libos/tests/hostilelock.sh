# The lock-word attack (issue 25, libos/tests/c/hostile.c): a process of
# user 1000 stores another live process's environment id where the
# library's lock word was (the parent's, a sleeping process's, its own
# while it keeps calling) and exits or stays; root's pipe and file are
# unchanged and the system goes on.
# veneer-only
/cbin/hostile lockword
