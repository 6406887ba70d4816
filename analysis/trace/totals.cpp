#include "analysis/trace/totals.hpp"

#include <algorithm>

namespace waitlab::trace {

RecordTotals::RecordTotals(std::size_t ranks) {
  for (auto& v : injected_by_rank) v.assign(ranks, 0.0);
}

void RecordTotals::add_events(const Event* e, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    first_event = std::min(first_event, e[i].time);
    last_event = std::max(last_event, e[i].time);
    if (e[i].op == MpiOp::Init && e[i].kind == EventKind::Enter) first_init = std::min(first_init, e[i].time);
    if (e[i].op == MpiOp::Finalize && e[i].kind == EventKind::Leave)
      last_finalize = std::max(last_finalize, e[i].time);
  }
}

void RecordTotals::add_truth(std::size_t r, const ComputeTruth* t, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    ++compute_intervals;
    nominal_compute += t[i].nominal;
    for (std::size_t k = 0; k < kCauseCount; ++k) {
      if (t[i].injected[k] > 0) ++injected_intervals[k];
      injected_by_rank[k][r] += t[i].injected[k];
    }
  }
}

RecordTotals totals(const Trace& t) {
  RecordTotals s(t.locations.size());
  for (std::size_t r = 0; r < t.locations.size(); ++r) {
    const auto& l = t.locations[r];
    s.add_events(l.events.data(), l.events.size());
    s.add_truth(r, l.truth.data(), l.truth.size());
  }
  return s;
}

}  // namespace waitlab::trace
