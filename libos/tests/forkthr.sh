# fork from a thread other than the first (libos/tests/c/forkthr.c):
# CPython's test_forkinthread hung on Veneer.
cbin/forkthr
echo "forkthr: $?"
