// Which server leads. Of the servers sharing one store, only the leader runs the job controller
// (lost nodes, time limits, scheduling), so that two servers never place different jobs on the
// same free GPU in the same instant.
//
// SQLite: one server opens a store, and it always leads. PostgreSQL (pg_leadership.h): the
// leader is the server whose dedicated connection holds a session-level advisory lock. It leads
// for as long as that connection lives; when the connection drops (the server died, the network
// failed, an administrator ended the session) the database releases the lock and another
// server's next TryAcquire takes it.
#pragma once

#include <memory>

namespace tf::store {

class Leadership {
 public:
  // Gives the lead up, if held (for PostgreSQL: closes the connection that holds the lock).
  virtual ~Leadership() = default;

  // Takes the lead if no server holds it, or checks that this one still does; returns whether
  // this server leads now. Once the lead is lost (its connection dropped) it returns false at
  // least once, so that the caller sees the loss, and takes the lead again on a later call if
  // it is free. Blocks for a database round trip (the connect timeout while the database cannot
  // be reached). Call it from one thread at a time.
  virtual bool TryAcquire() = 0;

  // What the latest TryAcquire found (for PostgreSQL, false before the first). Never blocks;
  // thread-safe.
  virtual bool Held() const = 0;
};

// The leadership of a store that only one server opens: always held.
std::unique_ptr<Leadership> AlwaysLeader();

}  // namespace tf::store
