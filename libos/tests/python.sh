# Debian's python3 (python3-minimal: the interpreter and its core
# library) runs a small script given with -c.
# with: python3-minimal
/usr/bin/python3 -c '
import sys, os
words = "the quick brown fox jumps over the lazy dog the end".split()
counts = {}
for w in words:
    counts[w] = counts.get(w, 0) + 1
for w, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
    print(w, n)
print(sum(i * i for i in range(1000)), 2 ** 100, 7 / 2)
with open("/tmp/py.txt", "w") as f:
    f.write("from python\n")
print(open("/tmp/py.txt").read().strip(), os.path.getsize("/tmp/py.txt"))
os.remove("/tmp/py.txt")
print(sys.argv[1:])
' one two
echo "status $?"
