// waitlab::engine — virtual processes as threads taking turns (virtual_transport.hpp).
#include "analysis/engine/virtual_transport.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace waitlab::engine {
namespace {

struct Stopped {};  // unwinds a body when the run ends early (not an error of that body)

enum class Status { Ready, Waiting, Done };

}  // namespace

struct VirtualWorld::State {
  int processes = 0;
  std::mt19937_64 random;
  std::mutex mutex;
  std::condition_variable turn;
  int running = -1;
  bool stopping = false;
  std::exception_ptr error;
  std::vector<Status> status;
  std::vector<Channel> waiting_on;
  std::vector<int> waiting_for;  // the source waited for, or kAnySource
  // mailbox[destination][channel][source]: the parcels not yet received, oldest first.
  std::vector<std::map<Channel, std::vector<std::deque<Bytes>>>> mailbox;

  static constexpr int kAnySource = -1;

  bool has_parcel(int p, Channel channel, int source) const {
    const auto& by_channel = mailbox[static_cast<std::size_t>(p)];
    const auto it = by_channel.find(channel);
    if (it == by_channel.end()) return false;
    for (std::size_t s = 0; s < it->second.size(); ++s)
      if (!it->second[s].empty() && (source == kAnySource || static_cast<int>(s) == source)) return true;
    return false;
  }
  bool runnable(int p) const {
    const auto i = static_cast<std::size_t>(p);
    return status[i] == Status::Ready || (status[i] == Status::Waiting && has_parcel(p, waiting_on[i], waiting_for[i]));
  }
  // Hands the turn to a runnable process picked by the generator (the mutex held). None while
  // some process is unfinished: they all wait for parcels nobody sends — the run stops.
  void pass_turn() {
    std::vector<int> candidates;
    bool unfinished = false;
    for (int p = 0; p < processes; ++p) {
      unfinished = unfinished || status[static_cast<std::size_t>(p)] != Status::Done;
      if (runnable(p)) candidates.push_back(p);
    }
    running = candidates.empty() ? -1 : candidates[static_cast<std::size_t>(random() % candidates.size())];
    if (candidates.empty() && unfinished) stop(std::make_exception_ptr(std::runtime_error(
        "virtual transport: every unfinished process waits for a parcel that nobody sends")));
    turn.notify_all();
  }
  void stop(std::exception_ptr why) {
    if (!error) error = std::move(why);
    stopping = true;
    turn.notify_all();
  }
  // Waits (the mutex held by `lock`) for process p's turn; throws Stopped if the run stopped.
  void await_turn(std::unique_lock<std::mutex>& lock, int p) {
    turn.wait(lock, [&] { return running == p || stopping; });
    if (stopping) throw Stopped{};
  }
};

namespace {

class VirtualTransport final : public Transport {
 public:
  VirtualTransport(VirtualWorld::State& world, int self) : world_(world), self_(self) {}
  int size() const override { return world_.processes; }
  int self() const override { return self_; }

  void flush() override {
    std::unique_lock lock(world_.mutex);
    for (auto& [to, buffer] : posted_) {
      auto& fifos = world_.mailbox[static_cast<std::size_t>(to.first)][to.second];
      fifos.resize(static_cast<std::size_t>(world_.processes));
      fifos[static_cast<std::size_t>(self_)].push_back(std::move(buffer));
    }
    posted_.clear();
    world_.pass_turn();  // a flush is where another process may run
    world_.await_turn(lock, self_);
  }

  Parcel receive(Channel channel) override { return take(channel, VirtualWorld::State::kAnySource); }
  Parcel receive(Channel channel, int source) override {
    if (source < 0 || source >= size())
      throw std::invalid_argument("virtual transport: source " + std::to_string(source) + " of " + std::to_string(size()));
    return take(channel, source);
  }

  [[noreturn]] void abort(int exit_code) override { throw Aborted(exit_code); }

 protected:
  void post_unchecked(int destination, Channel channel, std::span<const std::byte> bytes) override {
    Bytes& buffer = posted_[{destination, channel}];
    buffer.insert(buffer.end(), bytes.begin(), bytes.end());
  }

 private:
  // Waits until a parcel from `source` (or any) is there; of several sources, the generator picks.
  Parcel take(Channel channel, int source) {
    std::unique_lock lock(world_.mutex);
    if (world_.stopping) throw Stopped{};
    const auto me = static_cast<std::size_t>(self_);
    while (!world_.has_parcel(self_, channel, source)) {
      world_.status[me] = Status::Waiting;
      world_.waiting_on[me] = channel;
      world_.waiting_for[me] = source;
      world_.pass_turn();
      world_.await_turn(lock, self_);
    }
    world_.status[me] = Status::Ready;
    auto& fifos = world_.mailbox[me][channel];
    std::vector<std::size_t> sources;
    for (std::size_t s = 0; s < fifos.size(); ++s)
      if (!fifos[s].empty() && (source == VirtualWorld::State::kAnySource || static_cast<int>(s) == source))
        sources.push_back(s);
    const std::size_t from = sources[static_cast<std::size_t>(world_.random() % sources.size())];
    Parcel parcel{static_cast<int>(from), std::move(fifos[from].front())};
    fifos[from].pop_front();
    return parcel;
  }

  VirtualWorld::State& world_;
  int self_;
  std::map<std::pair<int, Channel>, Bytes> posted_;  // the buffers since the last flush
};

void run_process(VirtualWorld::State& world, int self, const std::function<void(Transport&)>& body) {
  VirtualTransport transport(world, self);
  try {
    {
      std::unique_lock lock(world.mutex);
      world.await_turn(lock, self);
    }
    body(transport);
  } catch (const Stopped&) {
  } catch (...) {
    std::lock_guard lock(world.mutex);
    world.stop(std::current_exception());
  }
  std::lock_guard lock(world.mutex);
  world.status[static_cast<std::size_t>(self)] = Status::Done;
  if (world.stopping) world.turn.notify_all();
  else world.pass_turn();
}

std::size_t undelivered(const VirtualWorld::State& world) {
  std::size_t n = 0;
  for (const auto& by_channel : world.mailbox)
    for (const auto& [channel, fifos] : by_channel)
      for (const auto& fifo : fifos) n += fifo.size();
  return n;
}

}  // namespace

VirtualWorld::VirtualWorld(int processes, std::uint64_t seed) : state_(std::make_unique<State>()) {
  if (processes < 1) throw std::invalid_argument("virtual transport: at least 1 process");
  state_->processes = processes;
  state_->random.seed(seed);
}

VirtualWorld::~VirtualWorld() = default;

void VirtualWorld::run(const std::function<void(Transport&)>& body) {
  State& s = *state_;
  const auto n = static_cast<std::size_t>(s.processes);
  s.running = -1;
  s.stopping = false;
  s.error = nullptr;
  s.status.assign(n, Status::Ready);
  s.waiting_on.assign(n, 0);
  s.waiting_for.assign(n, State::kAnySource);
  s.mailbox.assign(n, {});
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (int p = 0; p < s.processes; ++p) threads.emplace_back(run_process, std::ref(s), p, std::cref(body));
  {
    std::lock_guard lock(s.mutex);
    s.pass_turn();
  }
  for (auto& t : threads) t.join();
  if (s.error) std::rethrow_exception(s.error);
  if (const std::size_t left = undelivered(s); left > 0)
    throw std::runtime_error("virtual transport: " + std::to_string(left) + " parcels were never received");
}

}  // namespace waitlab::engine
