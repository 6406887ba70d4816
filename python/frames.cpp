// waitlab Python module — a Trace's tables as columns (frames.hpp).
#include "python/frames.hpp"

#include <pybind11/numpy.h>

#include <array>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace py = pybind11;

namespace waitlab::python {
namespace {

using trace::EventKind;
using trace::Location;
using trace::MpiOp;

template <typename T>
py::array_t<T> column(std::size_t n) {
  return py::array_t<T>(static_cast<py::ssize_t>(n));
}

// The rows of `events`: the ranks' locations, then their further threads.
std::vector<const Location*> locations_of(const trace::Trace& t) {
  std::vector<const Location*> out;
  out.reserve(t.locations.size() + t.threads.size());
  for (const Location& l : t.locations) out.push_back(&l);
  for (const Location& l : t.threads) out.push_back(&l);
  return out;
}

constexpr std::size_t kKinds = static_cast<std::size_t>(EventKind::CollEnd) + 1;
constexpr std::size_t kOps = static_cast<std::size_t>(MpiOp::Count_);

py::list kind_categories() {
  py::list l;
  for (std::size_t k = 0; k < kKinds; ++k) l.append(text(trace::event_kind_name(static_cast<EventKind>(k))));
  return l;
}

// MPI functions as categories: code op - 1 (MpiOp::None, a user region, has code -1: missing).
py::list op_categories() {
  py::list l;
  for (std::size_t op = 1; op < kOps; ++op) l.append(text(trace::mpi_name(static_cast<MpiOp>(op))));
  return l;
}
std::int8_t op_code(MpiOp op) { return static_cast<std::int8_t>(static_cast<int>(op) - 1); }

// The categories of the events' "Name": every distinct region name (regions of one name share a
// code), then the names of the kinds that are not Enter or Leave (pipit names an instant event by
// its record type).
struct NameTable {
  std::vector<std::string_view> categories;
  std::vector<std::int32_t> region_code;
  std::array<std::int32_t, kKinds> kind_code{};

  explicit NameTable(const trace::Definitions& defs) {
    std::unordered_map<std::string_view, std::int32_t> index;
    auto code_of = [&](std::string_view name) {
      auto [it, added] = index.emplace(name, static_cast<std::int32_t>(categories.size()));
      if (added) categories.push_back(name);
      return it->second;
    };
    for (const trace::Region& r : defs.regions) region_code.push_back(code_of(r.name));
    for (std::size_t k = 0; k < kKinds; ++k) {
      const auto kind = static_cast<EventKind>(k);
      kind_code[k] = (kind == EventKind::Enter || kind == EventKind::Leave) ? -1 : code_of(trace::event_kind_name(kind));
    }
  }
  std::int32_t code(const trace::Event& e) const {
    if (e.kind != EventKind::Enter && e.kind != EventKind::Leave) return kind_code[static_cast<std::size_t>(e.kind)];
    // The readers guarantee the reference (Definitions::defines_ref); a broken one is our bug.
    if (e.ref >= region_code.size()) throw std::logic_error("event names region " + std::to_string(e.ref) + ", not defined");
    return region_code[e.ref];
  }
  py::list list() const {
    py::list l;
    for (std::string_view s : categories) l.append(text(s));
    return l;
  }
};

}  // namespace

py::str text(std::string_view s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  if (o == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

const trace::Matching& TraceData::matching() {
  if (!matching_) {
    py::gil_scoped_release nogil;
    matching_ = std::make_unique<trace::Matching>(trace::Matching::build(trace));
  }
  return *matching_;
}

namespace {

// pipit's "Event Type": Enter 0, Leave 1, every other kind an instant (2).
constexpr std::int8_t event_type(EventKind k) {
  return k == EventKind::Enter ? 0 : k == EventKind::Leave ? 1 : 2;
}

// The name codes in the narrowest integer pandas keeps them in (Categorical's codes are int8 below
// 127 categories, int16 below 32767, ...): no copy when the Categorical is made.
template <typename Code>
py::array name_codes(const std::vector<const Location*>& locs, std::size_t n, const NameTable& names) {
  auto codes = column<Code>(n);
  Code* c = codes.mutable_data();
  py::gil_scoped_release nogil;
  std::size_t i = 0;
  for (const Location* l : locs)
    for (const trace::Event& e : l->events) c[i++] = static_cast<Code>(names.code(e));
  return codes;
}

}  // namespace

py::dict event_columns(const TraceData& data) {
  const auto locs = locations_of(data.trace);
  std::size_t n = 0;
  for (const Location* l : locs) n += l->events.size();
  const NameTable names(data.trace.defs);
  auto time = column<double>(n);
  auto type = column<std::int8_t>(n);
  auto kind = column<std::int8_t>(n);
  auto process = column<std::int32_t>(n);
  auto thread = column<std::int32_t>(n);
  auto partner = column<std::int32_t>(n);
  auto tag = column<std::int32_t>(n);
  auto bytes = column<std::uint64_t>(n);
  double* t = time.mutable_data();
  std::int8_t* ty = type.mutable_data();
  std::int8_t* k = kind.mutable_data();
  std::int32_t* p = process.mutable_data();
  std::int32_t* th = thread.mutable_data();
  std::int32_t* pa = partner.mutable_data();
  std::int32_t* tg = tag.mutable_data();
  std::uint64_t* b = bytes.mutable_data();
  {
    py::gil_scoped_release nogil;
    std::size_t i = 0;
    for (const Location* l : locs) {
      for (const trace::Event& e : l->events) {
        t[i] = e.time;
        ty[i] = event_type(e.kind);
        k[i] = static_cast<std::int8_t>(e.kind);
        p[i] = l->rank;
        th[i] = l->thread;
        pa[i] = e.peer;
        tg[i] = e.tag;
        b[i] = e.bytes;
        ++i;
      }
    }
  }
  const std::size_t categories = names.categories.size();
  py::dict d;
  d["Timestamp (s)"] = time;
  d["Event Type"] = type;
  d["Event Type categories"] = py::make_tuple("Enter", "Leave", "Instant");
  d["Kind"] = kind;
  d["Kind categories"] = kind_categories();
  d["Name"] = categories < 127     ? name_codes<std::int8_t>(locs, n, names)
              : categories < 32767 ? name_codes<std::int16_t>(locs, n, names)
                                    : name_codes<std::int32_t>(locs, n, names);
  d["Name categories"] = names.list();
  d["Process"] = process;
  d["Thread"] = thread;
  d["Partner"] = partner;
  d["Tag"] = tag;
  d["Bytes"] = bytes;
  return d;
}

py::dict message_columns(TraceData& data) {
  const trace::Matching& m = data.matching();
  const trace::Trace& tr = data.trace;
  // The row in `events` of each rank's first event (ranks come first there).
  std::vector<std::int64_t> first_row(tr.locations.size(), 0);
  for (std::size_t r = 1; r < tr.locations.size(); ++r)
    first_row[r] = first_row[r - 1] + static_cast<std::int64_t>(tr.locations[r - 1].events.size());
  const std::size_t n = m.messages.size();
  auto sender = column<std::int32_t>(n);
  auto receiver = column<std::int32_t>(n);
  auto comm = column<std::uint32_t>(n);
  auto tag = column<std::int32_t>(n);
  auto bytes = column<std::uint64_t>(n);
  auto send_time = column<double>(n);
  auto recv_time = column<double>(n);
  auto send_call = column<std::int8_t>(n);
  auto recv_call = column<std::int8_t>(n);
  auto send_row = column<std::int64_t>(n);
  auto recv_row = column<std::int64_t>(n);
  std::int32_t* s = sender.mutable_data();
  std::int32_t* r = receiver.mutable_data();
  std::uint32_t* c = comm.mutable_data();
  std::int32_t* tg = tag.mutable_data();
  std::uint64_t* b = bytes.mutable_data();
  double* st = send_time.mutable_data();
  double* rt = recv_time.mutable_data();
  std::int8_t* sc = send_call.mutable_data();
  std::int8_t* rc = recv_call.mutable_data();
  std::int64_t* sr = send_row.mutable_data();
  std::int64_t* rr = recv_row.mutable_data();
  {
    py::gil_scoped_release nogil;
    for (std::size_t i = 0; i < n; ++i) {
      const trace::Message& msg = m.messages[i];
      const trace::Event& send = tr.locations[msg.sender].events[msg.send_event];
      const trace::Event& recv = tr.locations[msg.receiver].events[msg.recv_event];
      s[i] = msg.sender;
      r[i] = msg.receiver;
      c[i] = send.ref;
      tg[i] = send.tag;
      b[i] = send.bytes;
      st[i] = send.time;
      rt[i] = recv.time;
      sc[i] = op_code(m.calls[msg.sender][msg.send_call].op);
      rc[i] = op_code(m.calls[msg.receiver][msg.recv_post_call].op);
      sr[i] = first_row[msg.sender] + msg.send_event;
      rr[i] = first_row[msg.receiver] + msg.recv_event;
    }
  }
  py::dict d;
  d["Sender"] = sender;
  d["Receiver"] = receiver;
  d["Communicator"] = comm;
  d["Tag"] = tag;
  d["Bytes"] = bytes;
  d["Send Time (s)"] = send_time;
  d["Receive Time (s)"] = recv_time;
  d["Send Call"] = send_call;
  d["Send Call categories"] = op_categories();
  d["Receive Call"] = recv_call;
  d["Receive Call categories"] = op_categories();
  d["Send Event"] = send_row;
  d["Receive Event"] = recv_row;
  return d;
}

py::dict region_columns(const TraceData& data) {
  const trace::Definitions& defs = data.trace.defs;
  const std::size_t n = defs.regions.size();
  auto op = column<std::int8_t>(n);
  auto mpi = column<bool>(n);
  auto enters = column<std::uint64_t>(n);
  std::uint64_t* en = enters.mutable_data();
  py::list names, files;
  for (std::size_t i = 0; i < n; ++i) {
    const trace::Region& reg = defs.regions[i];
    names.append(text(reg.name));
    files.append(text(reg.file));
    op.mutable_data()[i] = op_code(reg.op);
    mpi.mutable_data()[i] = reg.is_mpi();
    en[i] = 0;
  }
  {
    py::gil_scoped_release nogil;
    for (const Location* l : locations_of(data.trace))
      for (const trace::Event& e : l->events)
        if (e.kind == EventKind::Enter && e.ref < n) ++en[e.ref];
  }
  py::dict d;
  d["Name"] = names;
  d["MPI Op"] = op;
  d["MPI Op categories"] = op_categories();
  d["File"] = files;
  d["Is MPI"] = mpi;
  d["Enters"] = enters;
  return d;
}

py::dict location_columns(const TraceData& data) {
  const auto locs = locations_of(data.trace);
  const std::size_t n = locs.size();
  auto process = column<std::int32_t>(n);
  auto thread = column<std::int32_t>(n);
  auto events = column<std::uint64_t>(n);
  auto first = column<double>(n);
  auto last = column<double>(n);
  auto states = column<std::uint64_t>(n);
  auto omp = column<std::uint64_t>(n);
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = 0; i < n; ++i) {
    const Location& l = *locs[i];
    process.mutable_data()[i] = l.rank;
    thread.mutable_data()[i] = l.thread;
    events.mutable_data()[i] = l.events.size();
    first.mutable_data()[i] = l.events.empty() ? kNone : l.events.front().time;
    last.mutable_data()[i] = l.events.empty() ? kNone : l.events.back().time;
    states.mutable_data()[i] = l.states.size();
    omp.mutable_data()[i] = l.omp.size();
  }
  py::dict d;
  d["Process"] = process;
  d["Thread"] = thread;
  d["Events"] = events;
  d["First Time (s)"] = first;
  d["Last Time (s)"] = last;
  d["State Intervals"] = states;
  d["OpenMP Intervals"] = omp;
  return d;
}

}  // namespace waitlab::python
