// The delay kinds (delay.hpp); the replay itself is in replay.{hpp,cpp}, intervals.cpp and gamma.cpp.
#include "analysis/delay/delay.hpp"

namespace waitlab::analysis {

namespace {

constexpr std::array<std::string_view, kDelayKindCount> kKindNames = {
    "late_sender", "late_receiver", "barrier", "n_to_n", "1_to_n", "n_to_1"};

}  // namespace

std::string_view delay_kind_name(DelayKind k) {
  return kKindNames[static_cast<std::size_t>(k)];
}

DelayKind delay_kind(Pattern p) {
  switch (p) {
    case Pattern::LateSender: return DelayKind::LateSender;
    case Pattern::LateReceiver: return DelayKind::LateReceiver;
    case Pattern::WaitAtNxN:
    case Pattern::EarlyScan: return DelayKind::NxN;
    case Pattern::LateBroadcast: return DelayKind::OneToN;
    case Pattern::EarlyReduce: return DelayKind::NToOne;
    default: return DelayKind::Barrier;
  }
}

}  // namespace waitlab::analysis
