#include "models/action_tape.hpp"

#include <cstring>

#include "analysis/trace/varint.hpp"

namespace waitlab::models {

namespace {

// Presence bits, one per field that differs from Action{}; those of calls and compute in the
// low 7, so that their mask takes one byte.
enum Field : std::uint32_t {
  kPeer = 1u << 0,
  kTag = 1u << 1,
  kBytes = 1u << 2,
  kRequest = 1u << 3,
  kFlops = 1u << 4,
  kAmount = 1u << 5,
  kIteration = 1u << 6,
  kInWaitall = 1u << 7,
  kComm = 1u << 8,
  kRegion = 1u << 9,
  kPeer2 = 1u << 10,
  kRoot = 1u << 11,
  kTag2 = 1u << 12,
  kCounts = 1u << 13,
  kBytes2 = 1u << 14,
};

using trace::put_u64;
using trace::put_varint;
using trace::put_zigzag;
std::uint64_t bits(double d) {
  return trace::double_bits(d);
}

}  // namespace

void ActionTape::push(const Action& a) {
  static const Action none{};
  std::uint32_t mask = 0;
  if (a.flops) mask |= kFlops;
  if (a.in_waitall) mask |= kInWaitall;
  if (a.comm != none.comm) mask |= kComm;
  if (a.region != none.region) mask |= kRegion;
  if (a.peer != none.peer) mask |= kPeer;
  if (a.peer2 != none.peer2) mask |= kPeer2;
  if (a.root != none.root) mask |= kRoot;
  if (a.tag != none.tag) mask |= kTag;
  if (a.tag2 != none.tag2) mask |= kTag2;
  if (a.request != none.request) mask |= kRequest;
  if (a.iteration != none.iteration) mask |= kIteration;
  if (a.counts != none.counts) mask |= kCounts;
  if (a.bytes != none.bytes) mask |= kBytes;
  if (a.bytes2 != none.bytes2) mask |= kBytes2;
  if (bits(a.amount) != bits(none.amount)) mask |= kAmount;
  data_.push_back(static_cast<std::uint8_t>(a.kind));
  put_varint(data_, mask);
  if (mask & kComm) put_varint(data_, a.comm);
  if (mask & kRegion) put_varint(data_, a.region);
  if (mask & kPeer) put_zigzag(data_, a.peer);
  if (mask & kPeer2) put_zigzag(data_, a.peer2);
  if (mask & kRoot) put_zigzag(data_, a.root);
  if (mask & kTag) put_zigzag(data_, a.tag);
  if (mask & kTag2) put_zigzag(data_, a.tag2);
  if (mask & kRequest) put_zigzag(data_, a.request);
  if (mask & kIteration) put_zigzag(data_, a.iteration);
  if (mask & kCounts) put_varint(data_, a.counts);
  if (mask & kBytes) put_varint(data_, a.bytes);
  if (mask & kBytes2) put_varint(data_, a.bytes2);
  if (mask & kAmount) {
    put_u64(data_, bits(a.amount));
  }
  ++count_;
  computes_ += a.kind == ActionKind::Compute;
}

bool TapeReader::next(Action& a) {
  const std::vector<std::uint8_t>& d = t_.data_;
  if (pos_ >= d.size()) return false;
  trace::VarintCursor c(d.data() + pos_, d.size() - pos_, "action tape");
  const auto get = [&c] { return c.varint(); };
  const auto get_signed = [&c] { return c.zigzag(); };
  a = Action{};
  a.kind = static_cast<ActionKind>(c.byte());
  const auto mask = static_cast<std::uint32_t>(get());
  a.flops = (mask & kFlops) != 0;
  a.in_waitall = (mask & kInWaitall) != 0;
  if (mask & kComm) a.comm = static_cast<std::uint16_t>(get());
  if (mask & kRegion) a.region = static_cast<trace::RegionId>(get());
  if (mask & kPeer) a.peer = static_cast<Rank>(get_signed());
  if (mask & kPeer2) a.peer2 = static_cast<Rank>(get_signed());
  if (mask & kRoot) a.root = static_cast<Rank>(get_signed());
  if (mask & kTag) a.tag = static_cast<std::int32_t>(get_signed());
  if (mask & kTag2) a.tag2 = static_cast<std::int32_t>(get_signed());
  if (mask & kRequest) a.request = static_cast<std::int32_t>(get_signed());
  if (mask & kIteration) a.iteration = static_cast<std::int32_t>(get_signed());
  if (mask & kCounts) a.counts = static_cast<std::uint32_t>(get());
  if (mask & kBytes) a.bytes = get();
  if (mask & kBytes2) a.bytes2 = get();
  if (mask & kAmount) {
    const std::uint64_t b = c.u64();
    std::memcpy(&a.amount, &b, sizeof b);
  }
  pos_ += c.position();
  ++read_;
  return true;
}

}  // namespace waitlab::models
