# Applets on their own and in pipelines, redirection, && and ||.
echo hello world
uname -s -m
true && echo true-ok
false || echo false-ok
cat etc/passwd | wc -l
echo hi > tmp/x
cat tmp/x
echo more >> tmp/x
wc tmp/x
ls etc
sort etc/passwd | head -2
grep root etc/passwd && echo found
sed -e 's/root/ROOT/' -e 's/:.*//' etc/passwd
head -n 1 etc/motd
tail -n 2 etc/passwd
printf '%s-%d\n' abc 42
