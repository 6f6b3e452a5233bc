# Text applets in pipelines.
printf 'pear\napple\nfig\napple\nbanana\n' > tmp/fruit
sort tmp/fruit | uniq -c
sort -r tmp/fruit | head -n 2
grep -c apple tmp/fruit
grep -v apple tmp/fruit | tr a-z A-Z
cut -d: -f1,3 etc/passwd
seq 1 100 | sort -n -r | tail -n 3
seq 1 1000 | wc -l
awk -F: '{print $1 " has uid " $3}' etc/passwd
sed -n '2,3p' etc/passwd
echo "a b c" | xargs -n 1 echo item
