# FIFOs in use (libos/tests/c/fifouse.c): several readers and writers,
# end of file and EPIPE/SIGPIPE, poll/select/epoll (a set shared by fork
# too), an end inherited across fork and exec or passed over a socket.
cbin/fifouse
echo "fifouse: $?"
