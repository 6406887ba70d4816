#include "analysis/minprofile/minprofile.hpp"

#include <algorithm>

#include "analysis/engine/bytes.hpp"
#include "analysis/engine/serial_transport.hpp"
#include "analysis/engine/shard.hpp"

namespace waitlab::analysis {

using engine::ByteReader;
using engine::ByteWriter;
using engine::Bytes;
using trace::EventKind;

namespace {

// The profile of the owned rank r: its calls, in program order, as a PMPI wrapper sees them.
minprofile::RankProfile profile_of(const engine::Shard& shard, const trace::Matching& matching, trace::Rank r,
                                   double percentile) {
  minprofile::RankProfile prof(percentile);
  minprofile::CallFacts facts;
  const auto& ev = shard.location(r).events;
  if (!ev.empty()) prof.set_span(ev.front().time, ev.back().time);
  for (const auto& call : matching.calls[static_cast<std::size_t>(r)]) {
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
          facts.collective(e.peer == r, e.bytes + e.aux);
          break;
        default:
          break;
      }
    }
    prof.add(facts.finish(call.path, ev[call.leave].time));
  }
  return prof;
}

// The collective minima and histograms as they travel: both minima per slot, then every
// histogram's buckets with their slot.
struct SlotBucket {
  std::uint32_t slot;
  minprofile::Histogram::Bucket bucket;
};

Bytes encode_minima(const minprofile::GlobalMinima& g, const std::vector<minprofile::Histogram>& hist) {
  std::vector<SlotBucket> buckets;
  for (std::size_t s = 0; s < hist.size(); ++s)
    for (const auto& b : hist[s].bucket_list()) buckets.push_back({static_cast<std::uint32_t>(s), b});
  return std::move(ByteWriter().put(g.min_all).put(g.min_untested).put(buckets)).bytes();
}

void decode_minima(const Bytes& bytes, minprofile::GlobalMinima& g, std::vector<minprofile::Histogram>& hist) {
  ByteReader in(bytes);
  g.min_all = in.get_vector<double>();
  g.min_untested = in.get_vector<double>();
  const auto buckets = in.get_vector<SlotBucket>();
  hist.assign(minprofile::GlobalMinima::kSlots, {});
  for (std::size_t i = 0; i < buckets.size();) {
    std::vector<minprofile::Histogram::Bucket> of_slot;
    std::size_t j = i;
    for (; j < buckets.size() && buckets[j].slot == buckets[i].slot; ++j) of_slot.push_back(buckets[j].bucket);
    hist.at(buckets[i].slot) = minprofile::Histogram::of_buckets(std::move(of_slot));
    i = j;
  }
}

// Trace::attribute(key) is not empty: the first attribute of that key has a value.
bool has_attribute(const engine::Shard& shard, std::string_view key) {
  const auto it = std::find_if(shard.attributes.begin(), shard.attributes.end(),
                               [&](const trace::Attribute& a) { return a.key == key; });
  return it != shard.attributes.end() && !it->value.empty();
}

}  // namespace

minprofile::Result minprofile_estimate(const engine::Shard& shard, const trace::Matching& matching,
                                       engine::Transport& transport, double percentile) {
  std::vector<minprofile::RankProfile> owned;
  for (trace::Rank r = shard.owned.first; r < shard.owned.last; ++r)
    owned.push_back(profile_of(shard, matching, r, percentile));
  // The collective minima and histograms, folded rank by rank along the processes (what
  // minprofile::estimate does in one process).
  minprofile::GlobalMinima g;
  std::vector<minprofile::Histogram> hist(minprofile::GlobalMinima::kSlots);
  decode_minima(transport.chain(encode_minima(g, hist),
                                [&](Bytes in) {
                                  decode_minima(in, g, hist);
                                  for (const auto& p : owned) {
                                    p.contribute_minima(g);
                                    p.contribute_histograms(hist);
                                  }
                                  return encode_minima(g, hist);
                                }),
                g, hist);
  const double q = shard.ranks == 0 ? 5.0 : percentile;
  minprofile::set_percentiles(g, hist, q);
  // Each owned rank's rows and span, to process 0 in rank order.
  ByteWriter mine;
  for (const auto& p : owned) mine.put(p.begin()).put(p.end()).put(p.rows(g));
  const std::vector<Bytes> parts = transport.gather(mine.bytes());
  if (transport.self() != 0) return {};
  std::vector<std::vector<minprofile::RankRow>> rows;
  std::vector<double> begin, end;
  for (const Bytes& part : parts) {
    ByteReader in(part);
    while (!in.done()) {
      begin.push_back(in.get<double>());
      end.push_back(in.get<double>());
      rows.push_back(in.get_vector<minprofile::RankRow>());
    }
  }
  std::vector<std::string> names(matching.paths.size());
  for (std::size_t i = 0; i < names.size(); ++i)
    names[i] = matching.paths.name(static_cast<trace::CallPathId>(i), shard.defs);
  auto result = minprofile::assemble(std::move(rows), std::move(begin), std::move(end), names, q, true);
  result.computed[static_cast<std::size_t>(minprofile::Variant::ExcludeTested)] =
      has_attribute(shard, kTestedAttribute);
  return result;
}

minprofile::Result minprofile_estimate(const trace::Trace& trace, const trace::Matching& matching,
                                       double percentile) {
  engine::SerialTransport serial;
  return minprofile_estimate(engine::Shard::whole(trace), matching, serial, percentile);
}

}  // namespace waitlab::analysis
