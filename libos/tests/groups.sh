# Supplementary groups kept and inherited (libos/tests/c/groups.c).
cbin/groups
echo "groups: $?"
