# Signals and threads (libos/tests/c/sigroute.c): kill reaches a thread
# that does not block it, sigwaitinfo in a second thread, tgkill only to
# its thread.
cbin/sigroute
echo "sigroute: $?"
