# File-backed mmap: private, MAP_FIXED overlays, writable shared mappings
# written back, and the errors (libos/tests/c/mmapfile.c).
cbin/mmapfile
