// waitlab::engine — the transport of one MPI process (mpi_transport.hpp).
#include "analysis/engine/mpi/mpi_transport.hpp"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace waitlab::engine {
namespace {

// The gather's parts travel as point-to-point messages on the reserved channel of the default
// gather (transport.cpp), which no parcel can use.
constexpr int kGatherTag = kFirstReservedChannel;

// MPI counts are ints: a size beyond INT_MAX cannot travel as one message.
int mpi_count(std::uint64_t bytes, const char* what) {
  if (bytes > static_cast<std::uint64_t>(INT_MAX))
    throw std::length_error(std::string("mpi transport: ") + what + " of " + std::to_string(bytes) +
                            " bytes (at most " + std::to_string(INT_MAX) + ")");
  return static_cast<int>(bytes);
}

// The user operations: inout[i] = op(in[i], inout[i]). MPI may apply them in any order and
// grouping; the exact combinations are commutative and associative down to the bits.
template <double (*Op)(double, double)>
void combine_doubles(void* in, void* inout, int* len, MPI_Datatype* /*MPI_DOUBLE*/) {
  const auto* a = static_cast<const double*>(in);
  auto* b = static_cast<double*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = Op(a[i], b[i]);
}

// On the contiguous byte type of one MaxLoc: memcpy in and out (the bytes need not be aligned).
void combine_maxlocs(void* in, void* inout, int* len, MPI_Datatype* /*the MaxLoc type*/) {
  auto* a = static_cast<const std::byte*>(in);
  auto* b = static_cast<std::byte*>(inout);
  for (int i = 0; i < *len; ++i, a += sizeof(MaxLoc), b += sizeof(MaxLoc)) {
    MaxLoc x, y;
    std::memcpy(&x, a, sizeof x);
    std::memcpy(&y, b, sizeof y);
    const MaxLoc z = exact_maxloc(x, y);
    std::memcpy(b, &z, sizeof z);
  }
}

}  // namespace

MpiTransport::MpiTransport(MPI_Comm communicator) {
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  if (!initialised || finalised) throw std::logic_error("mpi transport: MPI is not running (MPI_Init first)");
  MPI_Comm_dup(communicator, &comm_);
  MPI_Comm_size(comm_, &size_);
  MPI_Comm_rank(comm_, &self_);
  void* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm_, MPI_TAG_UB, &tag_ub, &found);
  if (!found || *static_cast<int*>(tag_ub) < 0xFFFF) {
    MPI_Comm_free(&comm_);
    throw std::runtime_error("mpi transport: this MPI's tags end below 65535 (a channel is a tag)");
  }
  MPI_Op_create(&combine_doubles<exact_min>, 1, &min_);
  MPI_Op_create(&combine_doubles<exact_max>, 1, &max_);
  MPI_Op_create(&combine_maxlocs, 1, &maxloc_);
  MPI_Type_contiguous(static_cast<int>(sizeof(MaxLoc)), MPI_BYTE, &maxloc_type_);
  MPI_Type_commit(&maxloc_type_);
}

MpiTransport::~MpiTransport() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;  // too late to tidy: MPI's own end took everything with it
  if (!sending_.empty()) MPI_Waitall(static_cast<int>(sending_.size()), sending_.data(), MPI_STATUSES_IGNORE);
  MPI_Type_free(&maxloc_type_);
  MPI_Op_free(&maxloc_);
  MPI_Op_free(&max_);
  MPI_Op_free(&min_);
  MPI_Comm_free(&comm_);
}

void MpiTransport::post_unchecked(int destination, Channel channel, std::span<const std::byte> bytes) {
  Bytes& buffer = posted_[{destination, channel}];
  buffer.insert(buffer.end(), bytes.begin(), bytes.end());
}

void MpiTransport::flush() {
  for (const auto& [to, buffer] : posted_) (void)mpi_count(buffer.size(), "a parcel");  // before any is sent
  for (auto& [to, buffer] : posted_) {
    const int count = static_cast<int>(buffer.size());
    sending_bytes_.push_back(std::move(buffer));  // the vector's storage moves with it: the send's buffer
    sending_.push_back(MPI_REQUEST_NULL);
    MPI_Isend(sending_bytes_.back().data(), count, MPI_BYTE, to.first, to.second, comm_, &sending_.back());
    const bool to_self = to.first == self_;
    ++(to_self ? traffic_.parcels_to_self : traffic_.parcels_sent);
    (to_self ? traffic_.bytes_to_self : traffic_.bytes_sent) += static_cast<std::uint64_t>(count);
  }
  posted_.clear();
  reap_completed_sends();
}

// Drops the sends MPI reports complete, with their bytes (so a long run does not hold them all).
void MpiTransport::reap_completed_sends() {
  if (sending_.empty()) return;
  int done = 0;
  std::vector<int> indices(sending_.size());
  MPI_Testsome(static_cast<int>(sending_.size()), sending_.data(), &done, indices.data(),
               MPI_STATUSES_IGNORE);
  if (done == 0 || done == MPI_UNDEFINED) return;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < sending_.size(); ++i) {
    if (sending_[i] == MPI_REQUEST_NULL) continue;  // completed (Testsome set it so)
    if (kept != i) {  // (a self-move would free the bytes of a send still in flight)
      sending_[kept] = sending_[i];
      sending_bytes_[kept] = std::move(sending_bytes_[i]);
    }
    ++kept;
  }
  sending_.resize(kept);
  sending_bytes_.resize(kept);
}

Parcel MpiTransport::take(Channel channel, int source) {
  MPI_Status status;
  MPI_Probe(source, channel, comm_, &status);
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  Parcel parcel{status.MPI_SOURCE, Bytes(static_cast<std::size_t>(count))};
  // One thread receives: the message probed is the one this receive (same source, same tag) gets.
  MPI_Recv(parcel.bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, channel, comm_, MPI_STATUS_IGNORE);
  if (status.MPI_SOURCE != self_) {  // a parcel to itself was counted when sent
    ++traffic_.parcels_received;
    traffic_.bytes_received += static_cast<std::uint64_t>(count);
  }
  return parcel;
}

Parcel MpiTransport::receive(Channel channel) {
  return take(channel, MPI_ANY_SOURCE);
}

Parcel MpiTransport::receive(Channel channel, int source) {
  if (source < 0 || source >= size_)
    throw std::invalid_argument("mpi transport: source " + std::to_string(source) + " of " +
                                std::to_string(size_));
  return take(channel, source);
}

void MpiTransport::abort(int exit_code) {
  MPI_Abort(comm_, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; should it, the process still ends
}

std::uint64_t MpiTransport::sum(std::uint64_t value) {
  std::uint64_t total = 0;
  MPI_Allreduce(&value, &total, 1, MPI_UINT64_T, MPI_SUM, comm_);
  ++traffic_.collectives;
  traffic_.collective_bytes += sizeof value;
  return total;
}

double MpiTransport::allreduce_double(double value, MPI_Op op) {
  double result = 0;
  MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, op, comm_);
  ++traffic_.collectives;
  traffic_.collective_bytes += sizeof value;
  return result;
}

double MpiTransport::min(double value) {
  return allreduce_double(value, min_);
}
double MpiTransport::max(double value) {
  return allreduce_double(value, max_);
}

MaxLoc MpiTransport::maxloc(const MaxLoc& value) {
  MaxLoc result;
  MPI_Allreduce(&value, &result, 1, maxloc_type_, maxloc_, comm_);
  ++traffic_.collectives;
  traffic_.collective_bytes += sizeof value;
  return result;
}

std::vector<Bytes> MpiTransport::gather(std::span<const std::byte> bytes) {
  // Every process learns the largest part first, so that a part too large fails everywhere alike.
  (void)mpi_count(static_cast<std::uint64_t>(max(static_cast<double>(bytes.size()))), "a gather part");
  const int mine = static_cast<int>(bytes.size());
  std::vector<int> counts(self_ == 0 ? static_cast<std::size_t>(size_) : 0);
  MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_);
  traffic_.collectives += 2;
  traffic_.collective_bytes += sizeof mine + bytes.size();
  if (self_ != 0) {
    MPI_Send(bytes.data(), mine, MPI_BYTE, 0, kGatherTag, comm_);
    return {};
  }
  // Each part is received into its own buffer: process 0 never holds the gathered bytes twice
  // (a gather into one buffer cut into parts would, at the idle-wave summaries' size).
  std::vector<Bytes> parts(static_cast<std::size_t>(size_));
  parts[0].assign(bytes.begin(), bytes.end());
  std::vector<MPI_Request> requests(parts.size() - 1);
  for (std::size_t p = 1; p < parts.size(); ++p) {
    parts[p].resize(static_cast<std::size_t>(counts[p]));
    MPI_Irecv(parts[p].data(), counts[p], MPI_BYTE, static_cast<int>(p), kGatherTag, comm_, &requests[p - 1]);
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  return parts;
}

Bytes MpiTransport::broadcast(std::span<const std::byte> bytes) {
  std::uint64_t length = self_ == 0 ? bytes.size() : 0;
  MPI_Bcast(&length, 1, MPI_UINT64_T, 0, comm_);
  const int count = mpi_count(length, "a broadcast");
  Bytes result(self_ == 0 ? Bytes(bytes.begin(), bytes.end()) : Bytes(static_cast<std::size_t>(count)));
  MPI_Bcast(result.data(), count, MPI_BYTE, 0, comm_);
  traffic_.collectives += 2;
  traffic_.collective_bytes += self_ == 0 ? sizeof length + bytes.size() : 0;
  return result;
}

}  // namespace waitlab::engine
