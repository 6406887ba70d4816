// The floor of SimGrid 3.32's kernel on heat1d's communication pattern: plain s4u actors, no
// SMPI, no waitlab. Per iteration each rank sleeps 1 ms (its compute), sends 8 bytes to each
// neighbour (asynchronous put), receives from each neighbour (blocking get), then waits for
// its two sends: the simcalls the engine makes for a blocking 1D heat code under eager
// semantics (sleep, two isends, two irecv + wait, two waits on completed sends), with
// SimGrid's SMPI network model on a platform file. Whatever waitlab does on top costs more;
// bench/README.md §1 compares the two.
//
// usage: kernel_floor PLATFORM.xml RANKS ITERATIONS [--cfg=key:value ...]
//   hosts are taken in the platform's order (Engine::get_all_hosts), one rank per host.
#include <simgrid/s4u.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

int ranks = 0;
int iterations = 0;
std::vector<sg4::Mailbox*> from_left;   // rank r receives its left neighbour's message here
std::vector<sg4::Mailbox*> from_right;  // and its right neighbour's here
char payload[8];

void rank_body(int r) {
  for (int i = 0; i < iterations; ++i) {
    sg4::this_actor::sleep_for(1e-3);
    sg4::CommPtr to_left;
    sg4::CommPtr to_right;
    if (r > 0) to_left = from_right[r - 1]->put_async(payload, 8);
    if (r + 1 < ranks) to_right = from_left[r + 1]->put_async(payload, 8);
    if (r > 0) from_left[r]->get<char>();
    if (r + 1 < ranks) from_right[r]->get<char>();
    if (to_left) to_left->wait();
    if (to_right) to_right->wait();
  }
}

}  // namespace

int main(int argc, char** argv) {
  sg4::Engine engine(&argc, argv);
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s PLATFORM.xml RANKS ITERATIONS [--cfg=key:value ...]\n", argv[0]);
    return 2;
  }
  engine.set_config("network/model:SMPI");
  engine.load_platform(argv[1]);
  ranks = std::atoi(argv[2]);
  iterations = std::atoi(argv[3]);
  const auto hosts = engine.get_all_hosts();
  if (ranks < 1 || iterations < 1 || static_cast<std::size_t>(ranks) > hosts.size()) {
    std::fprintf(stderr, "need 1..%zu ranks and at least one iteration\n", hosts.size());
    return 2;
  }
  for (int r = 0; r < ranks; ++r) {
    from_left.push_back(sg4::Mailbox::by_name("l" + std::to_string(r)));
    from_right.push_back(sg4::Mailbox::by_name("r" + std::to_string(r)));
  }
  for (int r = 0; r < ranks; ++r) sg4::Actor::create("rank-" + std::to_string(r), hosts[r], rank_body, r);
  const auto t0 = std::chrono::steady_clock::now();
  engine.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double ops = 4.0 * ranks * iterations;  // the MPI calls of heat1d: two sends, two receives
  std::printf("ranks %d iterations %d simulated %.7g s wall %.2f s (%.0f operations per second)\n", ranks, iterations,
              sg4::Engine::get_clock(), wall, ops / wall);
  return 0;
}
