// waitlab::analysis — an idle period of the idle-wave analysis (idlewave.hpp): what one rank's
// summary carries to process 0 on the replay engine (summary.hpp), and what the result lists.
//
// Promise: a plain value (trivially copyable: it travels between the engine's processes as bytes).
#pragma once

#include <cstdint>

#include "analysis/waitstate/waitstate.hpp"

namespace waitlab::analysis {

// One idle period of one rank. 40 bytes: process 0 holds every rank's.
struct IdlePeriod {
  Time start = 0;
  double seconds = 0;
  // What the rank idles at this point of its iterations (the median over its iterations of
  // the idle of the call at the same position in the iteration, 0 where it idles now and
  // then): the pipeline's regular wait, subtracted from the period in a wavefront pipeline.
  double usual = 0;
  Rank rank = 0;
  std::int32_t iteration = -1;  // -1 before the first iteration
  Rank cause_rank = trace::kNoRank;
  Pattern pattern = Pattern::LateSender;
};
static_assert(sizeof(IdlePeriod) == 40);

}  // namespace waitlab::analysis
