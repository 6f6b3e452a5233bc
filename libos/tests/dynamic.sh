# A dynamically linked glibc program (ld.so and libc.so.6 from Debian's
# libc6 package) with arguments, environment, files and the heap.
# with: libc6
cbin/dynhello one "two words"
echo "status $?"
