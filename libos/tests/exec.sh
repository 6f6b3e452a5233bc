# Programs that cannot run are refused with Linux's errors (ENOEXEC, EACCES,
# ENOENT), the shell reports them as it does on Linux, and carries on.
# On ENOEXEC busybox sh runs the file as a shell script (POSIX), so a
# damaged ELF gives "not found" for its first bytes; `tr` makes those
# printable. Commands run under `sh -c` so that messages name `sh`, not this
# script (whose path differs between the host and Veneer).
b=/bin/busybox
head -c 64 $b > tmp/short
head -c 200 $b > tmp/cut
head -c 64 $b > tmp/arch
printf '\003' | dd of=tmp/arch bs=1 seek=18 conv=notrunc 2>/dev/null
cp $b tmp/machine
printf '\003' | dd of=tmp/machine bs=1 seek=18 conv=notrunc 2>/dev/null
: > tmp/empty
echo 'echo hi' > tmp/noexec
printf '#!/bin/nothing\necho hi\n' > tmp/nointerp
chmod +x tmp/short tmp/cut tmp/arch tmp/machine tmp/empty tmp/nointerp
{
    sh -c ./tmp/short; echo "header only: $?"
    sh -c ./tmp/cut; echo "program headers cut off: $?"
    sh -c ./tmp/arch; echo "i386 header: $?"
    sh -c ./tmp/machine; echo "busybox marked i386: $?"
} 2>&1 | tr -c '\n -~' '?'
rm tmp/machine
sh -c ./tmp/empty; echo "empty: $?"
sh -c ./tmp/noexec; echo "not executable: $?"
sh -c ./tmp; echo "directory: $?"
sh -c ./tmp/missing; echo "missing: $?"
sh -c ./etc/passwd/x; echo "not a directory: $?"
sh -c ./tmp/nointerp; echo "missing interpreter: $?"
sh -c nosuchcommand; echo "no such command: $?"
sh ./tmp/noexec; echo "run by sh: $?"
# Cut inside its segments, busybox still has whole headers: Linux maps it
# and it dies of SIGSEGV (139), lxrt refuses it (ENOEXEC; the shell then
# runs it as a script). Only "it did not run" is compared.
head -c 4096 $b > tmp/mid
chmod +x tmp/mid
(./tmp/mid; echo $? > tmp/status) > /dev/null 2>&1
test "$(cat tmp/status)" -ne 0 && echo "cut in a segment: refused"
echo still running
