// Replaying traces (models/replay.hpp): the compute scales a replay applies. The converters
// live beside it, one file each: trace_to_workload.cpp (a timed trace's events to actions),
// ti_to_workload.cpp (a TI trace's records to actions), ti_export.cpp (a workload's actions
// as TI records) and logical_trace.cpp (a workload as a trace in logical times); what they
// share is replay_common.hpp.
#include "models/replay.hpp"

#include <charconv>
#include <cmath>

#include "util/error.hpp"

namespace waitlab::models {

namespace {

std::string scale_error(const std::string& where, const std::string& text, const std::string& why) {
  return where + ": compute scale '" + text + "': " + why +
         " (expected FACTOR, REGION=FACTOR, @RANKS=FACTOR or REGION@RANKS=FACTOR; RANKS is N or N-M)";
}

}  // namespace

ComputeScale parse_compute_scale(const std::string& text, const std::string& where) {
  ComputeScale s;
  std::string factor = text;
  const auto eq = text.rfind('=');
  if (eq != std::string::npos) {
    factor = text.substr(eq + 1);
    std::string target = text.substr(0, eq);
    const auto atp = target.find('@');
    if (atp != std::string::npos) {
      const std::string ranks = target.substr(atp + 1);
      target = target.substr(0, atp);
      const auto dash = ranks.find('-');
      const std::string a = ranks.substr(0, dash);
      const std::string z = dash == std::string::npos ? a : ranks.substr(dash + 1);
      long long lo = 0, hi = 0;
      const auto ra = std::from_chars(a.data(), a.data() + a.size(), lo);
      const auto rz = std::from_chars(z.data(), z.data() + z.size(), hi);
      if (a.empty() || z.empty() || ra.ec != std::errc() || ra.ptr != a.data() + a.size() || rz.ec != std::errc() ||
          rz.ptr != z.data() + z.size() || lo < 0 || hi < lo || hi > (1 << 30))
        throw InputError(scale_error(where, text, "bad rank range '" + ranks + "'"));
      s.first = static_cast<Rank>(lo);
      s.last = static_cast<Rank>(hi);
    }
    if (target.empty() && atp == std::string::npos) throw InputError(scale_error(where, text, "nothing before '='"));
    s.region = target;
  }
  double f = 0;
  const auto r = std::from_chars(factor.data(), factor.data() + factor.size(), f);
  if (factor.empty() || r.ec != std::errc() || r.ptr != factor.data() + factor.size() || !std::isfinite(f) || f < 0)
    throw InputError(scale_error(where, text, "the factor must be a finite number >= 0"));
  s.factor = f;
  return s;
}

}  // namespace waitlab::models
