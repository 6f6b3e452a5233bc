# The files programs expect (libos/tests/c/devfiles.c), and the shell
# reading through /dev/stdin and /dev/fd.
cbin/devfiles
echo "devfiles: $?"
echo "piped into /dev/stdin" | cat /dev/stdin
echo "piped into /dev/fd/0" | cat /dev/fd/0
cat /dev/fd/3 3<<EOF2
a here-document on descriptor 3
EOF2
head -c 8 /dev/zero | od -An -tx1
