# Debian's bash (dynamic) with process substitution, which reads
# /dev/fd/N: `<(...)` and `>(...)`.
# with: bash
/bin/bash -c '
diff_lines() { while read -r a && read -r b <&3; do echo "$a|$b"; done < "$1" 3< "$2"; }
diff_lines <(printf "1\n2\n3\n") <(printf "a\nb\nc\n")
echo "sum: $(( $(printf "%s+" 1 2 3 4) 0 ))"
cat <(echo from a substitution)
echo into > >(cat)
wait
declare -A m=([x]=1 [y]=2); echo "${!m[@]}" | tr " " "\n" | sort | tr "\n" " "; echo
'
echo "status $?"
