# Calls lxrt does not implement return -ENOSYS, are noted once by name and
# the programs carry on (`cat` uses sendfile, which lxrt has since issue 14);
# swapoff fails on Linux too (no privilege, or no such swap file) and with
# ENOSYS on lxrt: the script prints the same either way. The `# log:` lines
# must appear on the console.
# log: lxrt: unsupported Linux call swapoff (168): -ENOSYS
cat etc/motd
cat etc/passwd | cat | wc -l
swapoff tmp/none 2> tmp/err || echo "swapoff: refused"
swapoff tmp/none 2> tmp/err || echo "swapoff again: refused"
echo still running
