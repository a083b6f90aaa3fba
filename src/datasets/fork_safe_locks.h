// Lock descriptors that a forked child must not keep (the shard cache's flocks).
//
// An flock belongs to the open file description, which fork shares between parent and child: a
// child holding a copy of a descriptor its parent locked keeps the lock after the parent lets
// go, and a child that then asks for the same lock on a descriptor of its own waits for itself
// forever. That is what a PyTorch DataLoader worker forked while its parent's reader was
// downloading a shard would do. Descriptors tracked here are made harmless in a child right
// after fork (pthread_atfork): each becomes a descriptor of /dev/null under the same number, so
// that the child holds none of the parent's locks, and any later close of it there closes
// nothing else. The parent's descriptors are untouched.
#pragma once

namespace tf::datasets {

// Tracks a descriptor that is about to be locked, or is (up to 4,096 at once; beyond that they
// are not tracked, as before). Track it before asking for the lock: a child forked while the
// lock is awaited must not keep it either.
void TrackLockFd(int fd);
// Gives the lock back (for every copy of the descriptor), stops tracking `fd` and closes it.
void CloseLockFd(int fd);

}  // namespace tf::datasets
