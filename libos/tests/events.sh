# epoll, eventfd, timerfd, signal masks of ppoll/epoll_pwait, and the
# FIONBIO/FIOCLEX ioctls, as on Linux (libos/tests/c/events.c).
cbin/events
echo "events: $?"
