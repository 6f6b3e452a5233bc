# Rust std programs built the default way: for musl (a static-PIE, no
# interpreter) and for glibc (dynamic: ld.so, libc.so.6, libgcc_s.so.1).
# with: libc6 libgcc-s1
for flavour in musl glibc; do
	cbin/stdprobe-$flavour "an arg" two
	echo "$flavour status $?"
done
