# Rust's std::process::Command (output, status, piped stdin, a killed
# child), built for musl (static-PIE) and glibc (dynamic).
# with: libc6 libgcc-s1
for flavour in musl glibc; do
	cbin/rcommand-$flavour
	echo "$flavour status $?"
done
