# execveat and fexecve (libos/tests/c/execveat.c), compared with the host.
cbin/execveat
echo "execveat: $?"
