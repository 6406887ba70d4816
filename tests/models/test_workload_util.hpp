// Helpers shared by the workload tests: building a workload from user-written options
// (defaults from its spec), drawing a whole stream, and printing actions compactly so that
// expected sequences can be written down by hand.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/workload.hpp"

namespace waitlab::models::workload_test {

using Given = std::vector<std::pair<std::string, std::string>>;

inline Options options_for(const std::string& type, const Given& given, const std::string& context = "test") {
  const auto* entry = find_workload(type);
  if (!entry) throw std::runtime_error("no workload " + type);
  std::vector<UserOption> user;
  for (const auto& [k, v] : given) user.push_back({k, v, context});
  return make_options(entry->spec, user, context, context);
}

inline std::unique_ptr<Workload> build(const std::string& type, const Given& given) {
  return make_workload(type, options_for(type, given));
}

inline std::vector<Action> draw(ActionStream& s) {
  std::vector<Action> out;
  Action a;
  while (s.next(a)) out.push_back(a);
  return out;
}

inline std::vector<Action> draw(const Workload& w, Rank r) {
  return draw(*w.stream(r));
}

// "it|kind args": e.g. "0|send >1 t0 8", "1|irecv <4 t1 8 r0", "0|compute(sweep) 0.0001",
// "0|enter compute", "1|bcast root2 8192".
inline std::string show(const Workload& w, const Action& a) {
  const auto& regions = w.definitions().regions;
  auto region = [&](trace::RegionId id) {
    return id < regions.size() ? regions[id].name : "?" + std::to_string(id);
  };
  char num[64];
  std::string s = std::to_string(a.iteration) + "|" + std::string(action_name(a.kind));
  auto msg = [&](const char* dir) {
    s += std::string(" ") + dir + std::to_string(a.peer) + " t" + std::to_string(a.tag) + " " +
         std::to_string(a.bytes);
  };
  switch (a.kind) {
    case ActionKind::Enter:
    case ActionKind::Leave:
      s += " " + region(a.region);
      break;
    case ActionKind::Compute:
      std::snprintf(num, sizeof num, "%g", a.amount);
      s += "(" + region(a.region) + ") " + num + (a.flops ? "f" : "");
      break;
    case ActionKind::Send:
    case ActionKind::Ssend:
      msg(">");
      break;
    case ActionKind::Recv:
      msg("<");
      break;
    case ActionKind::Isend:
      msg(">");
      s += " r" + std::to_string(a.request);
      break;
    case ActionKind::Irecv:
      msg("<");
      s += " r" + std::to_string(a.request);
      break;
    case ActionKind::Wait:
      s += " r" + std::to_string(a.request);
      break;
    case ActionKind::Bcast:
    case ActionKind::Reduce:
    case ActionKind::Gather:
    case ActionKind::Scatter:
      s += " root" + std::to_string(a.root) + " " + std::to_string(a.bytes);
      break;
    case ActionKind::Allreduce:
    case ActionKind::Allgather:
    case ActionKind::Alltoall:
      s += " " + std::to_string(a.bytes);
      break;
    default:
      break;
  }
  return s;
}

inline std::vector<std::string> shown(const Workload& w, Rank r) {
  std::vector<std::string> out;
  for (const auto& a : draw(w, r)) out.push_back(show(w, a));
  return out;
}

// `body` (one iteration, without the "it|" prefix) repeated for iterations 0..n-1.
inline std::vector<std::string> iterations(const std::vector<std::string>& body, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i)
    for (const auto& b : body) out.push_back(std::to_string(i) + "|" + b);
  return out;
}

}  // namespace waitlab::models::workload_test
