// count_violations, fit_linear and apply_linear of passes.hpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "analysis/clock/passes.hpp"
#include "analysis/engine/bytes.hpp"

namespace waitlab::clock {

std::uint64_t count_violations(const engine::Shard& shard, const Graph& g, engine::Transport& transport,
                               double lmin, const TimeOf& time) {
  const trace::Matching& m = shard.matching;
  std::uint64_t v = 0;
  // A message counts on its receiver's process, with the sender's time sent there.
  const std::vector<Time> send = message_partner_times(shard, transport, true, [&](std::uint32_t k) {
    return time(m.messages[k].sender, m.messages[k].send_event);
  });
  for (std::size_t k = 0; k < m.messages.size(); ++k) {
    const trace::Message& msg = m.messages[k];
    if (shard.owned.holds(msg.receiver) && time(msg.receiver, msg.recv_event) < send[k] + lmin) ++v;
  }
  // A member's end counts on its own process, against the latest begin it depends on: the
  // instance's latest releasing begin, or for a Prefix the latest up to its position.
  std::vector<double> begins =
      fold_slots(shard, g, transport, kNoTime, engine::exact_max, [&](std::uint32_t k, const SlotPut& put) {
        if (!g.releases(k)) return;
        const std::uint32_t i = g.inst[k];
        const std::uint64_t at = g.dep[i] == Dep::Prefix ? g.position[k] : 0;
        put(g.slot_first[i] + at, time(m.members[k].rank, m.members[k].begin_event));
      });
  for (std::uint32_t i = 0; i < m.collectives.size(); ++i)
    if (g.dep[i] == Dep::Prefix)
      for (std::uint64_t x = g.slot_first[i] + 1; x < g.slot_first[i + 1]; ++x)
        begins[x] = std::max(begins[x - 1], begins[x]);
  for (std::uint32_t k = 0; k < m.members.size(); ++k) {
    if (!g.constrained(k)) continue;
    const std::uint32_t i = g.inst[k];
    const double latest = begins[g.slot_first[i] + (g.dep[i] == Dep::Prefix ? g.position[k] : 0)];
    if (time(m.members[k].rank, m.members[k].end_event) < latest + lmin) ++v;
  }
  return transport.sum(v);
}

// The linear correction's maps, t' = I0 + (t − Ir)·(F0 − I0)/(Fr − Ir) per rank r, from the
// Leave times of MPI_Init (I) and MPI_Finalize (F) on r and on rank 0; one of them → an offset.
std::vector<Affine> fit_linear(const engine::Shard& shard, engine::Transport& transport,
                               trace::ClockReport& rep) {
  const engine::LocationRange owned = shard.owned;
  std::vector<Affine> maps(static_cast<std::size_t>(owned.size()));
  if (shard.ranks == 0) return maps;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> init(maps.size(), nan), fin(maps.size(), nan);
  for (Rank r = owned.first; r < owned.last; ++r) {
    const auto x = static_cast<std::size_t>(r - owned.first);
    for (const trace::Call& c : shard.matching.calls[static_cast<std::size_t>(r)]) {
      if (c.op == trace::MpiOp::Init && std::isnan(init[x])) init[x] = shard.time(r, c.leave);
      if (c.op == trace::MpiOp::Finalize) fin[x] = shard.time(r, c.leave);
    }
  }
  // Rank 0's two times, from the process that owns it, on every process.
  const engine::Bytes zero =
      transport.chain(engine::ByteWriter().put(nan).put(nan).bytes(), [&](engine::Bytes in) {
        if (!owned.holds(0)) return in;
        return engine::ByteWriter().put(init[0]).put(fin[0]).bytes();
      });
  engine::ByteReader reader(zero);
  const double i0 = reader.get<double>(), f0 = reader.get<double>();
  double max_offset = 0, max_drift = 0;
  for (Rank r = std::max<Rank>(owned.first, 1); r < owned.last; ++r) {
    const auto x = static_cast<std::size_t>(r - owned.first);
    const bool has_i = !std::isnan(i0) && !std::isnan(init[x]);
    const bool has_f = !std::isnan(f0) && !std::isnan(fin[x]);
    Affine& a = maps[x];
    if (has_i && has_f && fin[x] > init[x] && f0 > i0) {
      const double ir = init[x];
      const double b = (f0 - i0) / (fin[x] - ir);
      max_offset = std::max(max_offset, std::abs(ir - i0));
      max_drift = std::max(max_drift, std::abs((fin[x] - ir) / (f0 - i0) - 1));
      if (ir == i0 && b == 1) continue;
      a.kind = Affine::kTwoPoint;
      a.i0 = i0;
      a.ir = ir;
      a.b = b;
    } else if (has_i || has_f) {
      const double d = has_i ? i0 - init[x] : f0 - fin[x];
      max_offset = std::max(max_offset, std::abs(d));
      if (d == 0) continue;
      a.kind = Affine::kOffset;
      a.d = d;
    }
  }
  rep.max_offset = std::max(rep.max_offset, transport.max(max_offset));
  rep.max_drift = std::max(rep.max_drift, transport.max(max_drift));
  return maps;
}

// A rank whose map is the identity is not touched: bit-identical.
void apply_linear(const Owned& owned, const std::vector<Affine>& maps, engine::Transport& transport,
                  trace::ClockReport& rep) {
  std::uint64_t changed = 0;
  for (Rank r = owned.range.first; r < owned.range.last; ++r) {
    const Affine& map = maps[static_cast<std::size_t>(r - owned.range.first)];
    if (map.kind == Affine::kIdentity) continue;
    trace::Location& loc = owned[r];
    for (trace::Event& e : loc.events) e.time = map(e.time);
    for (trace::ComputeTruth& ct : loc.truth) {
      ct.start = map(ct.start);
      ct.end = map(ct.end);
    }
    ++changed;
  }
  rep.ranks_linear += transport.sum(changed);
}

}  // namespace waitlab::clock
