#include "analysis/minprofile/minprofile.hpp"

#include <algorithm>

namespace waitlab::analysis {

using trace::EventKind;

minprofile::Result minprofile_estimate(const trace::Trace& trace, const trace::Matching& matching,
                                       double percentile) {
  std::vector<minprofile::RankProfile> ranks(trace.ranks(), minprofile::RankProfile(percentile));
  minprofile::CallFacts facts;
  for (std::size_t r = 0; r < trace.ranks(); ++r) {
    const auto& ev = trace.locations[r].events;
    auto& prof = ranks[r];
    if (!ev.empty()) prof.set_span(ev.front().time, ev.back().time);
    for (const auto& call : matching.calls[r]) {
      facts.begin(call.op, ev[call.enter].time);
      facts.tested_complete((ev[call.enter].flags & trace::kTestedComplete) != 0);
      for (std::uint32_t i = call.enter + 1; i < call.leave; ++i) {
        const auto& e = ev[i];
        switch (e.kind) {
          case EventKind::Send:
          case EventKind::IsendComplete:
            facts.message(false, e.peer, e.bytes);
            break;
          case EventKind::Recv:
          case EventKind::IrecvComplete:
            facts.message(true, e.peer, e.bytes);
            break;
          case EventKind::CollEnd:
            facts.collective(e.peer == static_cast<trace::Rank>(r), e.bytes + e.aux);
            break;
          default:
            break;
        }
      }
      prof.add(facts.finish(call.path, ev[call.leave].time));
    }
  }
  std::vector<std::string> names(matching.paths.size());
  for (std::size_t i = 0; i < names.size(); ++i)
    names[i] = matching.paths.name(static_cast<trace::CallPathId>(i), trace.defs);
  auto result = minprofile::estimate(ranks, names);
  result.computed[static_cast<std::size_t>(minprofile::Variant::ExcludeTested)] =
      !trace.attribute(kTestedAttribute).empty();
  return result;
}

}  // namespace waitlab::analysis
