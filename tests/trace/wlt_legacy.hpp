// tests/trace: .wlt files of the older versions 1 and 2, written field by field (independently
// of wlt.cpp), for the tests that read them (test_wlt.cpp, test_trace_part.cpp).
#pragma once

#include <bit>
#include <cstdint>
#include <string>

#include "analysis/trace/trace.hpp"

namespace waitlab::trace {

// The layouts of versions 1 and 2, written field by field here (independently of wlt.cpp):
// header (its last u32 reserved, 0), regions, comms, attributes, ranks as (i32 rank, events,
// truth), end marker; version 2 adds state intervals and counter samples to each location,
// then the threads and the run section, and has no checksum either.
class Legacy {
 public:
  explicit Legacy(std::uint32_t version) : version_(version) {}
  std::string bytes(const Trace& t) {
    b_ = std::string("WLTRACE\0", 8);
    u(version_, 4);
    u(0x01020304u, 4);
    u(t.has_truth ? 1u : 0u, 4);
    u(0, 4);
    u(t.defs.regions.size(), 8);
    for (const Region& r : t.defs.regions) {
      str(r.name);
      u(static_cast<std::uint64_t>(r.op), 1);
      str(r.file);
    }
    u(t.defs.comms.size(), 8);
    for (const Communicator& c : t.defs.comms) {
      str(c.name);
      u(c.members.size(), 8);
      for (Rank m : c.members) u(static_cast<std::uint32_t>(m), 4);
    }
    u(t.attributes.size(), 8);
    for (const Attribute& a : t.attributes) {
      str(a.key);
      str(a.value);
    }
    u(t.locations.size(), 8);
    for (const Location& l : t.locations) {
      u(static_cast<std::uint32_t>(l.rank), 4);
      location(l);
    }
    if (version_ >= 2) {
      u(t.threads.size(), 8);
      for (const Location& l : t.threads) {
        u(static_cast<std::uint32_t>(l.rank), 4);
        u(static_cast<std::uint32_t>(l.thread), 4);
        location(l);
      }
      u(static_cast<std::uint64_t>(t.origin), 1);
      u(t.counters, 1);
      u(0, 2);
      u(0, 4);
      f(t.span_begin);
      f(t.span_end);
    }
    b_ += std::string("WLTEND\0\0", 8);
    return b_;
  }

 private:
  void location(const Location& l) {
      u(l.events.size(), 8);
      for (const Event& e : l.events) {
        f(e.time);
        u(e.bytes, 8);
        u(e.aux, 8);
        u(static_cast<std::uint64_t>(e.kind), 1);
        u(static_cast<std::uint64_t>(e.op), 1);
        u(e.flags, 2);
        u(e.ref, 4);
        u(static_cast<std::uint32_t>(e.peer), 4);
        u(static_cast<std::uint32_t>(e.tag), 4);
      }
      u(l.truth.size(), 8);
      for (const ComputeTruth& c : l.truth) {
        f(c.start);
        f(c.end);
        f(c.nominal);
        for (double d : c.injected) f(d);
        u(c.region, 4);
        u(static_cast<std::uint32_t>(c.iteration), 4);
      }
      if (version_ < 2) return;
      u(l.states.size(), 8);
      for (const StateInterval& st : l.states) {
        f(st.begin);
        f(st.end);
        u(st.state, 4);
      }
      u(l.counters.size(), 8);
      for (const CounterSample& c : l.counters) {
        f(c.time);
        u(c.instructions, 8);
        u(c.cycles, 8);
      }
  }
  void u(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  void f(double d) { u(std::bit_cast<std::uint64_t>(d), 8); }
  void str(const std::string& s) {
    u(s.size(), 4);
    b_ += s;
  }
  std::uint32_t version_;
  std::string b_;
};

}  // namespace waitlab::trace
