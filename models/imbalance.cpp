// Static load imbalance: per-rank slowdown factors on compute intervals.
#include <algorithm>
#include <cmath>
#include <limits>

#include "models/perturbation_models.hpp"
#include "models/rng.hpp"

namespace waitlab::models::perturb {

namespace {

using units::Quantity;
constexpr std::int64_t kMaxInt = std::numeric_limits<std::int32_t>::max();

// Multiplies every compute interval (of one region, if set) by a fixed factor.
class FactorEffect final : public RankEffect {
 public:
  FactorEffect(double factor, std::optional<trace::RegionId> region) : factor_(factor), region_(region) {}
  double apply(const ComputeInterval& c, double duration) override {
    if (region_ && c.region != *region_) return duration;
    return duration * factor_;
  }

 private:
  double factor_;
  std::optional<trace::RegionId> region_;
};

// A model whose factor depends on the rank only; `factor_of` is pure.
class StaticImbalance final : public Perturbation {
 public:
  StaticImbalance(std::string text, std::optional<trace::RegionId> region,
                  std::function<double(Rank)> factor_of)
      : text_(std::move(text)), region_(region), factor_of_(std::move(factor_of)) {}
  trace::Cause cause() const override { return trace::Cause::Imbalance; }
  std::string describe() const override { return text_; }
  std::unique_ptr<RankEffect> for_rank(Rank r) const override {
    return std::make_unique<FactorEffect>(factor_of_(r), region_);
  }

 private:
  std::string text_;
  std::optional<trace::RegionId> region_;
  std::function<double(Rank)> factor_of_;
};

std::string region_text(const Reader& rd) {
  return rd.has("region") ? " in region " + rd.choice("region") : std::string();
}

std::string num(double v) {
  return show(v, Quantity::Number);
}

// ---- imbalance_uniform ----
std::unique_ptr<Perturbation> make_uniform(const Options& o, const ModelContext& ctx) {
  const Reader rd(o, ctx, "imbalance_uniform");
  const double amplitude = rd.non_negative("amplitude");
  const auto stream = rd.stream();
  const std::uint64_t seed = ctx.seed;
  return std::make_unique<StaticImbalance>(
      "imbalance_uniform: each rank's compute" + region_text(rd) +
          " slower by a factor drawn uniformly from [1, " + num(1 + amplitude) + ")",
      rd.region(), [=](Rank r) {
        Rng rng(seed, stream_key(static_cast<std::uint64_t>(r), stream), Purpose::Imbalance);
        return 1 + amplitude * rng.uniform();
      });
}

// ---- imbalance_gradient ----
std::unique_ptr<Perturbation> make_gradient(const Options& o, const ModelContext& ctx) {
  const Reader rd(o, ctx, "imbalance_gradient");
  const double amplitude = rd.non_negative("amplitude");
  const double last = ctx.ranks > 1 ? static_cast<double>(ctx.ranks - 1) : 1.0;
  return std::make_unique<StaticImbalance>(
      "imbalance_gradient: compute" + region_text(rd) +
          " slower by a factor rising linearly from 1 on rank 0 to " + num(1 + amplitude) +
          " on the last rank",
      rd.region(), [=](Rank r) { return 1 + amplitude * static_cast<double>(r) / last; });
}

// ---- imbalance_hotspot ----
std::unique_ptr<Perturbation> make_hotspot(const Options& o, const ModelContext& ctx) {
  const Reader rd(o, ctx, "imbalance_hotspot");
  const auto grid = rd.grid();
  const auto center = rd.coords("center", grid);
  const double radius = rd.non_negative("radius");
  const double factor = rd.factor("factor");
  std::string c;
  for (int x : center) c += (c.empty() ? "" : ",") + std::to_string(x);
  return std::make_unique<StaticImbalance>("imbalance_hotspot: compute" + region_text(rd) + " " +
                                               num(factor) + "x slower on the ranks within " + num(radius) +
                                               " grid cells of (" + c + ")",
                                           rd.region(), [=](Rank r) {
                                             const auto x = grid_coords(grid, r);
                                             double d2 = 0;
                                             for (std::size_t i = 0; i < x.size(); ++i) {
                                               const double d = x[i] - center[i];
                                               d2 += d * d;
                                             }
                                             return d2 <= radius * radius ? factor : 1.0;
                                           });
}

// Members of a group given by rank list, node list and socket list (see docs/models.md).
std::vector<bool> group_members(const Reader& rd) {
  const auto& ctx = rd.context();
  std::vector<bool> in(static_cast<std::size_t>(ctx.ranks), false);
  const bool by_ranks = rd.has("ranks"), by_nodes = rd.has("nodes"), by_sockets = rd.has("sockets");
  if (by_ranks)
    for (Rank r : rd.ranks("ranks")) in[static_cast<std::size_t>(r)] = true;
  if (by_nodes || by_sockets) {
    if (ctx.placement.size() != static_cast<std::size_t>(ctx.ranks))
      rd.fail(by_nodes ? "nodes" : "sockets", "needs the platform's rank placement, which is not known here");
    int nodes = 0, sockets = 0;
    for (const auto& s : ctx.placement) {
      nodes = std::max(nodes, s.node + 1);
      sockets = std::max(sockets, s.socket + 1);
    }
    // Which nodes (sockets) are selected: all when the option is absent, else the listed ones.
    const auto selected = [&](const std::string& option, const std::string& noun, int count) {
      std::vector<bool> on(static_cast<std::size_t>(count), !rd.has(option));
      if (rd.has(option))
        for (auto i : rd.list(option)) {
          if (i >= count)
            rd.fail(option, noun + " " + std::to_string(i) + " runs no rank (ranks occupy " + option +
                                " 0.." + std::to_string(count - 1) + ")");
          on[static_cast<std::size_t>(i)] = true;
        }
      return on;
    };
    const auto node_on = selected("nodes", "node", nodes);
    const auto socket_on = selected("sockets", "socket", sockets);
    for (std::size_t r = 0; r < in.size(); ++r) {
      const auto& s = ctx.placement[r];
      if (node_on[static_cast<std::size_t>(s.node)] && socket_on[static_cast<std::size_t>(s.socket)])
        in[r] = true;
    }
  }
  return in;
}

std::string selection_text(const Reader& rd) {
  std::string t;
  const auto list = [&](std::string_view name) {
    std::string s;
    for (auto v : rd.list(name)) s += (s.empty() ? "" : ",") + std::to_string(v);
    return s;
  };
  if (rd.has("ranks")) t += "ranks " + list("ranks");
  if (rd.has("nodes") || rd.has("sockets")) {
    if (!t.empty()) t += " and ";
    t += "the ranks on ";
    t += rd.has("sockets") ? "socket(s) " + list("sockets") + " of " : std::string();
    t += rd.has("nodes") ? "node(s) " + list("nodes") : std::string("every node");
  }
  return t;
}

// ---- imbalance_slow_group ----
std::unique_ptr<Perturbation> make_slow_group(const Options& o, const ModelContext& ctx) {
  const Reader rd(o, ctx, "imbalance_slow_group");
  if (!rd.has("ranks") && !rd.has("nodes") && !rd.has("sockets"))
    rd.fail("ranks", "the group is empty: give ranks, nodes or sockets");
  const double factor = rd.factor("factor");
  auto in = group_members(rd);
  return std::make_unique<StaticImbalance>("imbalance_slow_group: compute" + region_text(rd) + " " +
                                               num(factor) + "x slower on " + selection_text(rd),
                                           rd.region(), [in = std::move(in), factor](Rank r) {
                                             return in[static_cast<std::size_t>(r)] ? factor : 1.0;
                                           });
}

// ---- imbalance_periodic_region ----
class PeriodicEffect final : public RankEffect {
 public:
  PeriodicEffect(double factor, trace::RegionId region, std::int64_t every, std::int64_t offset)
      : factor_(factor), region_(region), every_(every), offset_(offset) {}
  double apply(const ComputeInterval& c, double duration) override {
    if (c.region != region_ || c.iteration < offset_ || (c.iteration - offset_) % every_ != 0)
      return duration;
    return duration * factor_;
  }

 private:
  double factor_;
  trace::RegionId region_;
  std::int64_t every_, offset_;
};

class PeriodicRegion final : public Perturbation {
 public:
  PeriodicRegion(std::string text, std::vector<bool> in, double factor, trace::RegionId region,
                 std::int64_t every, std::int64_t offset)
      : text_(std::move(text)),
        in_(std::move(in)),
        factor_(factor),
        region_(region),
        every_(every),
        offset_(offset) {}
  trace::Cause cause() const override { return trace::Cause::Imbalance; }
  std::string describe() const override { return text_; }
  std::unique_ptr<RankEffect> for_rank(Rank r) const override {
    // Ranks outside the block get factor 1: the effect never changes their intervals.
    return std::make_unique<PeriodicEffect>(in_[static_cast<std::size_t>(r)] ? factor_ : 1.0, region_, every_,
                                            offset_);
  }

 private:
  std::string text_;
  std::vector<bool> in_;
  double factor_;
  trace::RegionId region_;
  std::int64_t every_, offset_;
};

std::unique_ptr<Perturbation> make_periodic_region(const Options& o, const ModelContext& ctx) {
  const Reader rd(o, ctx, "imbalance_periodic_region");
  const auto region = rd.region();
  if (!region) rd.fail("region", "is required: name the user region that becomes heavier");
  const double factor = rd.factor("factor");
  const auto every = rd.integer("every", 1, kMaxInt);
  const auto offset = rd.integer("offset", 0, kMaxInt);
  if (ctx.iterations > 0 && offset >= ctx.iterations)
    rd.fail("offset", "iteration " + std::to_string(offset) + " does not exist (the workload has iterations 0.." +
                          std::to_string(ctx.iterations - 1) + "): no iteration would be heavier");
  std::vector<bool> in(static_cast<std::size_t>(ctx.ranks), !rd.has("ranks") && !rd.has("block_from"));
  std::string where = "all ranks";
  if (rd.has("block_from") != rd.has("block_to"))
    rd.fail(rd.has("block_from") ? "block_to" : "block_from",
            "is required with the other corner of the block (block_from and block_to go together)");
  if (rd.has("ranks")) {
    for (Rank r : rd.ranks("ranks")) in[static_cast<std::size_t>(r)] = true;
    where = "the listed ranks";
  }
  if (rd.has("block_from")) {
    const auto grid = rd.grid();
    const auto lo = rd.coords("block_from", grid);
    const auto hi = rd.coords("block_to", grid);
    for (std::size_t i = 0; i < lo.size(); ++i)
      if (lo[i] > hi[i])
        rd.fail("block_to", "coordinate " + std::to_string(hi[i]) + " of dimension " + std::to_string(i) +
                                " is below block_from's " + std::to_string(lo[i]));
    for (Rank r = 0; r < ctx.ranks; ++r) {
      const auto x = grid_coords(grid, r);
      bool inside = true;
      for (std::size_t i = 0; i < x.size(); ++i) inside = inside && x[i] >= lo[i] && x[i] <= hi[i];
      if (inside) in[static_cast<std::size_t>(r)] = true;
    }
    where = rd.has("ranks") ? "the listed ranks and the grid block" : "the grid block";
  }
  std::string text = "imbalance_periodic_region: region " + rd.choice("region") + " " + num(factor) +
                     "x slower on " + where + " every " + std::to_string(every) +
                     " iteration(s) from iteration " + std::to_string(offset);
  return std::make_unique<PeriodicRegion>(std::move(text), std::move(in), factor, *region, every, offset);
}

}  // namespace

void add_imbalance_models(std::vector<PerturbationEntry>& out) {
  const auto spec = [](std::string name, std::string description, std::vector<OptionSpec> options) {
    return make_spec(SpecKind::Perturbation, std::move(name), std::move(description), std::move(options));
  };
  const auto factor = [](std::string def, std::string what) {
    return quantity_option("factor", Quantity::Number, std::move(def),
                           "slowdown factor >= 1 of " + what + " (1.1 = 10% slower)");
  };
  out.push_back(
      {spec("imbalance_uniform",
            "Static load imbalance: every rank's compute is slower by its own factor, drawn uniformly from "
            "[1, 1 + amplitude) and fixed for the whole run (deterministic for the seed).",
            {quantity_option("amplitude", Quantity::Percent, "10%", "largest extra compute time, relative"),
             region_option(), stream_option()}),
       make_uniform});
  out.push_back({spec("imbalance_gradient",
                      "Static load imbalance rising linearly with the rank: factor 1 on rank 0, 1 + "
                      "amplitude on the last "
                      "rank.",
                      {quantity_option("amplitude", Quantity::Percent, "10%",
                                       "extra compute time of the last rank, relative"),
                       region_option()}),
                 make_gradient});
  out.push_back(
      {spec(
           "imbalance_hotspot",
           "A hot spot in the process grid (as in Zeus-MP): ranks whose grid coordinates lie within `radius` "
           "(Euclidean distance, in grid cells) of `center` compute `factor` times longer.",
           {list_option("center",
                        "grid coordinates of the sphere's centre, slowest dimension first (e.g. 8,8,8 in a "
                        "16x16x16 grid)",
                        false),
            quantity_option("radius", Quantity::Number, "",
                            "radius of the sphere in grid cells (0 = the centre only)"),
            factor("1.5", "the ranks inside the sphere"), region_option()}),
       make_hotspot});
  out.push_back(
      {spec("imbalance_slow_group",
            "A slow group of ranks, e.g. one socket 10% slower: the ranks listed in `ranks`, plus the ranks "
            "placed on the given `nodes` and `sockets` (sockets alone: that socket of every node), compute "
            "`factor` times longer.",
            {list_option("ranks", "ranks of the group (e.g. 0-15,32)"),
             list_option("nodes", "nodes whose ranks belong to the group (after placement)"),
             list_option("sockets", "socket indices within a node whose ranks belong to the group"),
             factor("1.1", "the group"), region_option()}),
       make_slow_group});
  out.push_back(
      {spec("imbalance_periodic_region",
            "A region that is heavier on a sub-block of ranks every k iterations (as Sweep3D's fixup): "
            "compute "
            "in `region` takes `factor` times longer on the block in iterations offset, offset+every, ...",
            {[] {
               auto o = region_option();
               o.optional = false;
               o.description = "the user region that becomes heavier (e.g. fixup)";
               return o;
             }(),
             factor("2", "the region on the block"),
             quantity_option("every", Quantity::Integer, "1", "period k in iterations"),
             quantity_option("offset", Quantity::Integer, "0", "first iteration that is heavier"),
             list_option("ranks",
                         "ranks of the block; default: every rank unless block_from/block_to are given"),
             list_option("block_from", "lowest grid coordinates of the block (inclusive), e.g. 0,0"),
             list_option("block_to", "highest grid coordinates of the block (inclusive), e.g. 3,7")}),
       make_periodic_region});
}

}  // namespace waitlab::models::perturb
