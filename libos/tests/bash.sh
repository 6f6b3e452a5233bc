# Debian's bash, dynamically linked (ld.so, libc, libtinfo): arrays,
# associative arrays, arithmetic, here-strings, [[ ]], functions, pipes,
# command substitution, subshells. (Process substitution needs /dev/fd:
# libos/tests/pending/procsubst.sh.)
# with: bash
/bin/bash -c '
declare -A m=([x]=1 [y]=2 [z]=3)
for k in $(printf "%s\n" "${!m[@]}" | sort); do echo "$k=${m[$k]}"; done
a=(one two three); echo "${#a[@]} ${a[1]} ${a[@]:1}"
echo "sum: $(( $(printf "%s+" 1 2 3 4) 0 ))"
read -r first rest <<< "here string words"; echo "$first|$rest"
[[ abc == a* && 3 -lt 10 ]] && echo "pattern ok"
f() { local x=$1; echo "f got $x"; return 7; }; f arg; echo "f returned $?"
s=$(echo inner | tr a-z A-Z); echo "$s"
(exit 4); echo "subshell $?"
printf "%05.1f|%-4s|%x\n" 3.14159 ab 255
echo "${BASH_VERSINFO[0]} major"
'
echo "status $?"
