# with: python3
# Python's pty module on a pseudo-terminal: os.openpty, then pty.fork
# (glibc's forkpty: the child leads a session whose controlling terminal
# is the slave), a line typed at the master read by the child, and the
# master's EIO once the child has gone.
/usr/bin/python3 -u -c '
import errno, os, pty, sys, termios
m, s = os.openpty()
print("isatty", os.isatty(s), os.isatty(m), os.ttyname(s).startswith("/dev/pts/"))
os.write(s, b"one\n")
print(os.read(m, 100))
print("canonical", bool(termios.tcgetattr(s)[3] & termios.ICANON))
os.close(s)
try:
    os.read(m, 10)
except OSError as e:
    print("master after the slave closed:", errno.errorcode[e.errno])
os.close(m)

pid, fd = pty.fork()
if pid == 0:
    print("child: tty", os.isatty(0), os.isatty(1), os.getsid(0) == os.getpid())
    try:
        os.setsid()
        print("child: setsid worked")
    except OSError as e:
        print("child: setsid", errno.errorcode[e.errno])
    os.write(1, b"child: ready\n")  # one write: the parent waits for it
    line = sys.stdin.readline()
    print("child: read", repr(line))
    sys.stdout.flush()
    os._exit(3)
out = b""
while b"ready\r\n" not in out:
    out += os.read(fd, 100)
os.write(fd, b"typed\n")
while True:
    try:
        d = os.read(fd, 100)
    except OSError as e:
        print("master:", errno.errorcode[e.errno])
        break
    if not d:
        break
    out += d
print(out.replace(b"\r\n", b"\n").decode(), end="")
print("status", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
'
echo "status $?"
