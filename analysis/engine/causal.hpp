// waitlab::engine — the causal forward replay (plan §0.2, rule D7): every event of every location
// gets a value in event order, an event waiting for values made at other locations' events.
//
// Promise: a CausalReplay<V> (V trivially copyable) is declared by each process for the locations
// it owns, then run() — called once, by every process, also those owning no location — calls
// `event(l, k, inputs)` once for every event k of every owned location l, in event order per
// location, and the value it returns is event k's value. inputs are the event's needs in the
// order they were declared for it; each holds the value it waited for, or let_go when the replay
// let that need go (below). Needs:
//   - need(l, k, from, key): the value of the event `from` offered to l under `key`
//     (offer(from, e, l, key): event e's value goes to l under key; the pair (from, l, key)
//     names one value; a value no need names is dropped);
//   - need_instance(l, k, i): instance i's value — combine() of the values of every event fed to
//     it (feed(l, e, i)), anywhere; combine must be commutative and associative to the bits
//     (exact_max is), so that the order in which the values meet cannot show. An instance no
//     event feeds has the value V{}.
// A location advances until an event needs a value not there yet; each process advances its
// locations as far as they go, then sends the values made for other processes' locations (one
// parcel to every process per round, on `channel`; an instance's values of one process
// combined into one), until every location is done. When no location anywhere can advance and
// nothing travels (a cycle, or a need nothing will ever meet), the replay lets a need go: among
// the stuck locations the one whose urgency(l, tag of its blocked need) is largest, the lowest
// such location on equal urgencies (an exact maxloc over the processes), and
//   - LetGo::Blocked: its blocked need — the first need of its next event that has no value,
//     in declaration order — is let go. A location lets one need go at a time: letting another
//     one go (at the same event) takes the earlier one back. If the same need of the same event
//     would be let go a second time without any location having advanced in between (the
//     releases would go round for ever), every need of that event without a value is let go
//     (let_go is not called again for those let go before since);
//   - LetGo::Event: every need of its next event without a value is let go.
// let_go(l, tag) is called for every need let go. The values are a function of the trace and the
// declarations only: the moments a replay is stuck are the same for every partition and every
// delivery order (each stuck state is the most every location can reach), so neither the number
// of processes nor the order in which parcels arrive can show in them. next(l) afterwards is the
// number of l's events the replay timed (all of them unless a stuck state had nothing blocked).
// Cost: O(events + feeds + (needs + offers)·log needs) work per process besides the callbacks (the
// values land in slots found once, by sorting, and by binary search for a remote value on arrival); one round
// per step of a causal chain that crosses processes, each round one parcel per process pair and one integer
// sum.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "analysis/engine/bytes.hpp"
#include "analysis/engine/partition.hpp"
#include "analysis/engine/transport.hpp"

namespace waitlab::engine {

inline constexpr Channel kCausalChannel = 0xFE40;

enum class LetGo : std::uint8_t { Blocked, Event };

// What the processes have of an instance: how many feed it and which need its value.
struct InstanceRoutes {
  std::vector<std::uint32_t> feeders;     // per instance: processes with a feed
  std::vector<std::vector<int>> needers;  // per instance this process feeds: others needing it
};
// Every process says which instances it feeds and which it needs (collective, every process).
InstanceRoutes instance_routes(Transport& transport, const std::vector<std::uint8_t>& feeds,
                               const std::vector<std::uint8_t>& needs);

template <typename V>
requires std::is_trivially_copyable_v<V>
class CausalReplay {
 public:
  struct Input {
    V value{};
    bool let_go = false;
    std::uint8_t tag = 0;
  };
  struct Callbacks {
    std::function<V(Location, std::uint32_t, std::span<const Input>)> event;
    std::function<V(const V&, const V&)> combine;
    std::function<double(Location, std::uint8_t)> urgency;  // finite, ≥ 0
    std::function<void(Location, std::uint8_t)> let_go;
  };

  // `events[i]`: the number of events of location owned.first + i; `instances`: how many there are
  // (the same on every process).
  CausalReplay(Transport& transport, const Partition& partition, LocationRange owned,
               std::vector<std::uint32_t> events, std::uint32_t instances, LetGo rule = LetGo::Blocked,
               Channel channel = kCausalChannel)
      : t_(transport),
        partition_(partition),
        owned_(owned),
        rule_(rule),
        channel_(channel),
        loc_(static_cast<std::size_t>(owned.size())),
        inst_(instances) {
    if (events.size() != loc_.size())
      throw std::invalid_argument("causal replay: one event count per owned location");
    for (std::size_t i = 0; i < loc_.size(); ++i) loc_[i].events = events[i];
  }

  void need(Location l, std::uint32_t event, Location from, std::uint64_t key, std::uint8_t tag = 0) {
    at(l).needs.push_back({event, false, tag, from, key});
  }
  void need_instance(Location l, std::uint32_t event, std::uint32_t instance, std::uint8_t tag = 0) {
    at(l).needs.push_back({event, true, tag, 0, instance_index(instance)});
  }
  void offer(Location from, std::uint32_t event, Location to, std::uint64_t key) {
    at(from).offers.push_back({event, to, key});
  }
  void feed(Location l, std::uint32_t event, std::uint32_t instance) {
    at(l).feeds.push_back({event, instance_index(instance)});
  }

  void run(const Callbacks& cb) {
    cb_ = &cb;
    prepare();
    for (std::size_t i = loc_.size(); i-- > 0;) wake(i);
    const std::uint64_t kUnit = std::uint64_t{1} << 32;  // unfinished locations above, activity below
    for (;;) {
      const bool active = advance();
      const bool sent = t_.size() > 1 && exchange();
      const std::uint64_t total = t_.sum(unfinished_ * kUnit + (active || sent ? 1 : 0));
      if (total / kUnit == 0) break;
      if (total % kUnit != 0) {
        ++epoch_;
        continue;
      }
      if (!release()) break;  // nothing blocked (cannot happen): the rest stays untimed
    }
    cb_ = nullptr;
  }

  std::uint32_t next(Location l) const { return loc_.at(static_cast<std::size_t>(l - owned_.first)).next; }

 private:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  struct Need {
    std::uint32_t event;
    bool instance;
    std::uint8_t tag;
    Location from;
    std::uint64_t key;     // the offer's key, or the instance
    std::size_t slot = 0;  // where its value lands (a point need)
  };
  struct Offer {
    std::uint32_t event;
    Location to;
    std::uint64_t key;
    std::size_t slot = kNone;  // a location owned here: where the value lands (kNone: nobody needs it)
  };
  struct Feed {
    std::uint32_t event;
    std::uint64_t instance;
  };
  struct Loc {
    std::uint32_t events = 0, next = 0;
    std::vector<Need> needs;
    std::vector<Offer> offers;
    std::vector<Feed> feeds;
    std::size_t need = 0, offer = 0, feed = 0;  // cursors: the first of event `next`
    std::size_t skip = kNone, blocked = kNone;
    bool queued = false, all_go = false;  // all_go: every need of event `next` without a value goes
    std::uint64_t epoch = 0;              // when `released` was filled
    std::vector<std::size_t> released;    // needs let go at event `next` in that epoch
  };
  struct Inst {
    std::uint32_t local = 0;     // this process's feeds not yet made
    std::uint32_t missing = 0;   // processes (this one included) whose combined value is missing
    std::optional<V> mine, all;  // this process's combination; every process's
    std::vector<std::size_t> waiting;
    bool needed = false;
  };
  struct Key {
    Location from, to;
    std::uint64_t key;
    auto operator<=>(const Key&) const = default;
  };
  struct Slot {  // the value of one (from, to, key) some owned location needs
    std::optional<V> value;
    std::vector<std::size_t> waiting;
  };

  Loc& at(Location l) {
    if (!owned_.holds(l)) throw std::out_of_range("causal replay: location not owned here");
    return loc_[static_cast<std::size_t>(l - owned_.first)];
  }
  std::uint64_t instance_index(std::uint32_t i) const {
    if (i >= inst_.size()) throw std::out_of_range("causal replay: no such instance");
    return i;
  }

  void prepare() {
    std::vector<std::uint8_t> feeds(inst_.size(), 0), needs(inst_.size(), 0);
    for (const Loc& s : loc_) unfinished_ += s.events > 0 ? 1 : 0;
    link_slots();
    const auto by_event = [](const auto& a, const auto& b) { return a.event < b.event; };
    for (Loc& s : loc_) {
      std::stable_sort(s.needs.begin(), s.needs.end(), by_event);
      std::stable_sort(s.offers.begin(), s.offers.end(), by_event);
      std::stable_sort(s.feeds.begin(), s.feeds.end(), by_event);
      for (const Feed& f : s.feeds) feeds[f.instance] = 1, ++inst_[f.instance].local;
      for (const Need& n : s.needs)
        if (n.instance) needs[n.key] = 1, inst_[n.key].needed = true;
    }
    routes_ = instance_routes(t_, feeds, needs);
    for (std::size_t i = 0; i < inst_.size(); ++i) inst_[i].missing = routes_.feeders[i];
    out_.assign(static_cast<std::size_t>(t_.size()), ByteWriter());
  }

  // The slot of a key (kNone if no owned location needs it).
  std::size_t slot_of(const Key& k) const {
    const auto it = std::lower_bound(keys_.begin(), keys_.end(), k);
    return it != keys_.end() && *it == k ? static_cast<std::size_t>(it - keys_.begin()) : kNone;
  }

  // One slot per key the owned locations need; each point need and each offer to an owned
  // location learns its slot.
  void link_slots() {
    struct Ref {
      Key key;
      std::size_t* slot;
    };
    std::vector<Ref> needs, offers;
    for (std::size_t i = 0; i < loc_.size(); ++i) {
      const Location l = owned_.first + static_cast<Location>(i);
      for (Need& n : loc_[i].needs)
        if (!n.instance) needs.push_back({Key{n.from, l, n.key}, &n.slot});
      for (Offer& o : loc_[i].offers)
        if (owned_.holds(o.to)) offers.push_back({Key{l, o.to, o.key}, &o.slot});
    }
    const auto less = [](const Ref& a, const Ref& b) { return a.key < b.key; };
    std::sort(needs.begin(), needs.end(), less);
    std::sort(offers.begin(), offers.end(), less);
    for (const Ref& r : needs) {
      if (keys_.empty() || keys_.back() != r.key) keys_.push_back(r.key);
      *r.slot = keys_.size() - 1;
    }
    slots_.resize(keys_.size());
    std::size_t j = 0;  // the offers to owned locations meet their slots in one merge
    for (const Ref& r : offers) {
      while (j < keys_.size() && keys_[j] < r.key) ++j;
      if (j < keys_.size() && keys_[j] == r.key) *r.slot = j;
    }
  }

  void wake(std::size_t i) {
    Loc& s = loc_[i];
    if (s.queued) return;
    s.queued = true;
    s.blocked = kNone;
    ready_.push_back(i);
  }

  // Advances every location that can; whether any event was timed.
  bool advance() {
    bool any = false;
    while (!ready_.empty()) {
      const std::size_t i = ready_.back();
      ready_.pop_back();
      loc_[i].queued = false;
      any = time_events(i) || any;
    }
    return any;
  }

  // The value of need n if it has one (else registers location i as waiting for it).
  const V* value_of(const Need& n, std::size_t i, bool wait) {
    if (n.instance) {
      Inst& in = inst_[n.key];
      if (in.missing == 0) return in.all ? &*in.all : &empty_;
      if (wait) in.waiting.push_back(i);
      return nullptr;
    }
    Slot& g = slots_[n.slot];
    if (g.value) return &*g.value;
    if (wait) g.waiting.push_back(i);
    return nullptr;
  }

  bool time_events(std::size_t i) {
    Loc& s = loc_[i];
    const Location l = owned_.first + static_cast<Location>(i);
    bool any = false;
    while (s.next < s.events) {
      const std::uint32_t k = s.next;
      inputs_.clear();
      std::size_t d = s.need;
      for (; d < s.needs.size() && s.needs[d].event == k; ++d) {
        const Need& n = s.needs[d];
        if (d == s.skip) {
          inputs_.push_back({V{}, true, n.tag});
          continue;
        }
        const V* v = value_of(n, i, !s.all_go);
        if (v == nullptr && s.all_go) {
          if (std::find(s.released.begin(), s.released.end(), d) == s.released.end()) cb_->let_go(l, n.tag);
          inputs_.push_back({V{}, true, n.tag});
          continue;
        }
        if (v == nullptr) {
          s.blocked = d;
          return any;
        }
        inputs_.push_back({*v, false, n.tag});
      }
      const V value = cb_->event(l, k, inputs_);
      any = true;
      s.need = d;
      s.next = k + 1;
      if (s.next == s.events) --unfinished_;
      s.all_go = false;
      s.released.clear();
      for (; s.offer < s.offers.size() && s.offers[s.offer].event == k; ++s.offer)
        send(l, s.offers[s.offer], value);
      for (; s.feed < s.feeds.size() && s.feeds[s.feed].event == k; ++s.feed)
        feed_value(s.feeds[s.feed].instance, value);
    }
    return any;
  }

  void send(Location from, const Offer& o, const V& value) {
    if (owned_.holds(o.to)) {
      if (o.slot != kNone) arrive(o.slot, value);
      return;
    }
    ByteWriter& w = out_[static_cast<std::size_t>(partition_.owner(o.to))];
    w.put(std::uint8_t{0}).put(from).put(o.to).put(o.key).put(value);
  }

  void arrive(std::size_t slot, const V& value) {
    Slot& g = slots_[slot];
    g.value = value;
    for (std::size_t w : g.waiting) wake(w);
    g.waiting.clear();
  }

  void feed_value(std::uint64_t i, const V& value) {
    Inst& in = inst_[i];
    in.mine = in.mine ? cb_->combine(*in.mine, value) : value;
    if (--in.local > 0) return;
    for (int p : routes_.needers[i])
      out_[static_cast<std::size_t>(p)].put(std::uint8_t{1}).put(i).put(*in.mine);
    if (in.needed) partial(i, *in.mine);
  }

  void partial(std::uint64_t i, const V& value) {
    Inst& in = inst_[i];
    in.all = in.all ? cb_->combine(*in.all, value) : value;
    if (--in.missing > 0) return;
    for (std::size_t w : in.waiting) wake(w);
    in.waiting.clear();
  }

  // One round: a parcel to every other process, one from each; whether this process sent a value.
  bool exchange() {
    bool sent = false;
    for (int p = 0; p < t_.size(); ++p) {
      if (p == t_.self()) continue;
      ByteWriter& w = out_[static_cast<std::size_t>(p)];
      sent = sent || !w.bytes().empty();
      t_.post(p, channel_, w.bytes());
      w = ByteWriter();
    }
    t_.flush();
    for (int p = 0; p < t_.size(); ++p) {
      if (p == t_.self()) continue;
      const Parcel parcel = t_.receive(channel_, p);
      ByteReader in(parcel.bytes);
      while (!in.done()) {
        if (in.get<std::uint8_t>() == 0) {
          const auto from = in.get<Location>();
          const auto to = in.get<Location>();
          const auto key = in.get<std::uint64_t>();
          const V value = in.get<V>();
          if (const std::size_t slot = slot_of(Key{from, to, key}); slot != kNone) arrive(slot, value);
        } else {
          const auto i = in.get<std::uint64_t>();
          partial(i, in.get<V>());
        }
      }
    }
    return sent;
  }

  // Every location is stuck: lets the most urgent one's need(s) go. False if none is blocked.
  bool release() {
    MaxLoc best{-std::numeric_limits<double>::infinity(), partition_.locations()};
    for (std::size_t i = 0; i < loc_.size(); ++i) {
      const Loc& s = loc_[i];
      if (s.next == s.events || s.blocked == kNone) continue;
      const Location l = owned_.first + static_cast<Location>(i);
      best = exact_maxloc(best, MaxLoc{cb_->urgency(l, s.needs[s.blocked].tag), l});
    }
    best = t_.maxloc(best);
    if (best.value == -std::numeric_limits<double>::infinity()) return false;
    if (!owned_.holds(best.location)) return true;
    const std::size_t i = static_cast<std::size_t>(best.location - owned_.first);
    Loc& s = loc_[i];
    if (s.epoch != epoch_) s.released.clear(), s.epoch = epoch_;
    const bool again = std::find(s.released.begin(), s.released.end(), s.blocked) != s.released.end();
    if (rule_ == LetGo::Event || again) {
      s.all_go = true;
      s.skip = kNone;
    } else {
      cb_->let_go(best.location, s.needs[s.blocked].tag);
      s.skip = s.blocked;
      s.released.push_back(s.blocked);
    }
    wake(i);
    return true;
  }

  Transport& t_;
  const Partition& partition_;
  LocationRange owned_;
  LetGo rule_;
  Channel channel_;
  std::vector<Loc> loc_;
  std::vector<Inst> inst_;
  InstanceRoutes routes_;
  std::vector<Key> keys_;    // sorted: what the owned locations need
  std::vector<Slot> slots_;  // their values, as keys_
  std::vector<ByteWriter> out_;
  std::vector<std::size_t> ready_;
  std::vector<Input> inputs_;
  std::uint64_t epoch_ = 0;
  std::uint64_t unfinished_ = 0;  // owned locations with events not timed
  const V empty_{};
  const Callbacks* cb_ = nullptr;
};

}  // namespace waitlab::engine
