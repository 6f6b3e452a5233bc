# Capabilities lent at fork are loans (libos/tests/c/caprevoke.c): a
# process that revokes everything it holds hurts nobody but itself.
cbin/caprevoke
echo "caprevoke: $?"
cbin/caprevoke | wc -l
echo "the shell still forks: $(echo yes | cat)"
