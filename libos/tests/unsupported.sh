# Calls lxrt does not implement return -ENOSYS, are noted once by name and
# the programs carry on (`cat` uses sendfile, which lxrt has since issue 14);
# mkfifo (mknodat) succeeds on Linux and fails with ENOSYS on lxrt: the
# comparison accepts either. The `# log:` lines must appear on the console.
# log: lxrt: unsupported Linux call mknodat (259): -ENOSYS
cat etc/motd
cat etc/passwd | cat | wc -l
mkfifo tmp/p 2> tmp/err || grep -q 'Function not implemented' tmp/err && echo "mkfifo: made, or ENOSYS"
mkfifo tmp/q 2> tmp/err || grep -q 'Function not implemented' tmp/err && echo "mkfifo again: made, or ENOSYS"
echo still running
