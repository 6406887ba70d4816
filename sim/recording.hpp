// waitlab::sim — what a simulation records, in memory that does not grow with the run.
//
// Promise: a Recording takes each rank's events and compute intervals' ground truth as the
// rank appends them into a small buffer of its own (all ranks' buffers together about
// `buffer_bytes`); a full buffer is encoded compactly (LEB128 varints; a time as the
// difference of its bit pattern from the previous record's, so exact) and appended to a spill
// file, which is unlinked once open (nothing is left behind, whatever ends the process). The
// last event a rank appended stays in its buffer, so that it can still be changed
// (last_event(): the online estimator flags an MPI_Wait's Enter after its test); any event's
// time can be changed by its index (set_time(): MPI_Finalize's synchronised Leave), applied as
// the records are read back. write_wlt() then writes the .wlt trace rank by rank — the bytes
// trace::write_wlt writes for the same trace held in memory — and totals() reads the records
// without writing them; both return the run's RecordTotals. Neither keeps more than one block
// of records in memory. A failure to write or read the spill file is a std::runtime_error
// naming it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "analysis/trace/totals.hpp"
#include "analysis/trace/trace.hpp"
#include "analysis/trace/wlt.hpp"

namespace waitlab::sim {

class Recording {
 public:
  static constexpr std::size_t kBufferBytes = 16u << 20;  // all ranks' buffers, events and truth

  Recording(std::string spill_path, std::size_t ranks, std::size_t buffer_bytes = kBufferBytes);
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  void event(trace::Rank r, const trace::Event& e);
  trace::Event& last_event(trace::Rank r);  // the rank has an event
  void truth(trace::Rank r, const trace::ComputeTruth& t);
  std::uint64_t events(trace::Rank r) const { return ranks_[static_cast<std::size_t>(r)].events; }
  // Sets the time of rank r's event number `index` (0-based, < events(r)).
  void set_time(trace::Rank r, std::uint64_t index, trace::Time t);

  std::size_t ranks() const { return ranks_.size(); }
  std::uint64_t spilled_bytes() const { return file_size_ + out_.size(); }
  std::size_t event_capacity() const { return event_cap_; }  // events a rank's buffer holds

  // The trace `head` (definitions, attributes, truth flag; its locations are not read) with
  // every rank's records, as .wlt.
  trace::RecordTotals write_wlt(const trace::Trace& head, std::ostream& out);
  trace::RecordTotals totals();

 private:
  struct Chunk {
    std::uint64_t offset = 0;
    std::uint32_t bytes = 0;
    std::uint32_t count = 0;
  };
  struct Patch {
    std::uint64_t index = 0;
    trace::Time time = 0;
  };
  struct RankRecords {
    std::vector<trace::Event> buffer;
    std::vector<trace::ComputeTruth> truth_buffer;
    std::vector<Chunk> event_chunks;
    std::vector<Chunk> truth_chunks;
    std::vector<Patch> patches;  // of spilled events, in the order set
    std::uint64_t events = 0;
    std::uint64_t truths = 0;
  };
  class Reader;
  friend class Reader;

  template <typename T>
  void spill(std::vector<T>& buffer, std::vector<Chunk>& chunks);  // encodes and empties a full buffer
  Chunk append(std::uint32_t count);  // the chunk of the bytes encoded into out_ since `chunk_start_`
  void flush();
  void read_chunk(const Chunk& c, std::vector<std::uint8_t>& into) const;
  trace::LocationSource source(trace::Rank r, std::unique_ptr<Reader>& reader,
                               trace::RecordTotals& totals) const;
  [[noreturn]] void io_error(const char* what) const;

  std::string path_;
  int fd_ = -1;
  std::vector<RankRecords> ranks_;
  std::size_t event_cap_ = 0;
  std::size_t truth_cap_ = 0;
  std::vector<std::uint8_t> out_;  // encoded chunks not yet written
  std::size_t chunk_start_ = 0;    // where the chunk being encoded starts in out_
  std::uint64_t file_size_ = 0;
};

}  // namespace waitlab::sim
