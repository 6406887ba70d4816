// waitlab::engine — P processes in one program, for the tests.
//
// Promise: VirtualWorld(P, seed).run(body) runs body once per virtual process, each with its
// own Transport (size() P, self() its number), on a thread of its own but one at a time: a
// process runs until it flushes, waits in receive() for a parcel not yet sent, or ends; then a
// generator seeded with `seed` picks which process runs next, and on each receive() which
// source's oldest parcel on that channel is delivered (parcels from one source stay in order,
// as the Transport promises). So one seed is one reproducible interleaving and delivery order,
// and other seeds are others. run() returns when every body has; it rethrows the first
// exception a body raised (Aborted for abort()), after ending the others' waits. If every
// unfinished process waits for a parcel nobody will send, run() throws std::runtime_error.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "analysis/engine/transport.hpp"

namespace waitlab::engine {

class VirtualWorld {
 public:
  VirtualWorld(int processes, std::uint64_t seed);
  ~VirtualWorld();
  VirtualWorld(const VirtualWorld&) = delete;
  VirtualWorld& operator=(const VirtualWorld&) = delete;

  void run(const std::function<void(Transport&)>& body);

  struct State;  // the mailboxes and the scheduler (virtual_transport.cpp)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace waitlab::engine
