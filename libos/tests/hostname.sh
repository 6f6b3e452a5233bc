# Setting the host and domain names (sethostname, setdomainname: ENOSYS
# before; CPython's test_sethostname failed): every process is root, so
# the name changes for everyone (uname, /proc/sys/kernel). (Veneer only:
# the host's name is not this test's to set.)
# veneer-only
# log: hostname: 0
# log: veneer-test
# log: uname: veneer-test
# log: proc: veneer-test
# log: child: veneer-test
# log: domain: example.org
# log: 65 bytes: 22
hostname veneer-test; echo "hostname: $?"
hostname
echo "uname: $(uname -n)"
echo "proc: $(cat /proc/sys/kernel/hostname)"
sh -c 'echo "child: $(uname -n)"'
cbin/setnames
