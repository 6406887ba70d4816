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

// A table's columns as they are made: add<T>(name) puts an array of n values under `name` and
// returns its data, which the caller fills (without the GIL: the arrays are Python objects, the
// values are not).
class Columns {
 public:
  explicit Columns(std::size_t n) : n_(n) {}
  template <typename T>
  T* add(const char* name) {
    auto a = column<T>(n_);
    T* data = a.mutable_data();
    dict_[name] = std::move(a);
    return data;
  }
  // A categorical column's categories (its array holds the codes).
  void categories(const std::string& name, py::object list) { dict_[py::str(name + " categories")] = std::move(list); }
  void set(const char* name, py::object values) { dict_[name] = std::move(values); }
  py::dict done() { return std::move(dict_); }

 private:
  std::size_t n_;
  py::dict dict_;
};

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
  Columns cols(n);
  double* time = cols.add<double>("Timestamp (s)");
  std::int8_t* type = cols.add<std::int8_t>("Event Type");
  std::int8_t* kind = cols.add<std::int8_t>("Kind");
  std::int32_t* process = cols.add<std::int32_t>("Process");
  std::int32_t* thread = cols.add<std::int32_t>("Thread");
  std::int32_t* partner = cols.add<std::int32_t>("Partner");
  std::int32_t* tag = cols.add<std::int32_t>("Tag");
  std::uint64_t* bytes = cols.add<std::uint64_t>("Bytes");
  {
    py::gil_scoped_release nogil;
    std::size_t i = 0;
    for (const Location* l : locs) {
      for (const trace::Event& e : l->events) {
        time[i] = e.time;
        type[i] = event_type(e.kind);
        kind[i] = static_cast<std::int8_t>(e.kind);
        process[i] = l->rank;
        thread[i] = l->thread;
        partner[i] = e.peer;
        tag[i] = e.tag;
        bytes[i] = e.bytes;
        ++i;
      }
    }
  }
  const std::size_t categories = names.categories.size();
  cols.set("Name", categories < 127     ? name_codes<std::int8_t>(locs, n, names)
                   : categories < 32767 ? name_codes<std::int16_t>(locs, n, names)
                                        : name_codes<std::int32_t>(locs, n, names));
  cols.categories("Name", names.list());
  cols.categories("Event Type", py::make_tuple("Enter", "Leave", "Instant"));
  cols.categories("Kind", kind_categories());
  return cols.done();
}

py::dict message_columns(TraceData& data) {
  const trace::Matching& m = data.matching();
  const trace::Trace& tr = data.trace;
  // The row in `events` of each rank's first event (ranks come first there).
  std::vector<std::int64_t> first_row(tr.locations.size(), 0);
  for (std::size_t r = 1; r < tr.locations.size(); ++r)
    first_row[r] = first_row[r - 1] + static_cast<std::int64_t>(tr.locations[r - 1].events.size());
  const std::size_t n = m.messages.size();
  Columns cols(n);
  std::int32_t* sender = cols.add<std::int32_t>("Sender");
  std::int32_t* receiver = cols.add<std::int32_t>("Receiver");
  std::uint32_t* comm = cols.add<std::uint32_t>("Communicator");
  std::int32_t* tag = cols.add<std::int32_t>("Tag");
  std::uint64_t* bytes = cols.add<std::uint64_t>("Bytes");
  double* send_time = cols.add<double>("Send Time (s)");
  double* recv_time = cols.add<double>("Receive Time (s)");
  std::int8_t* send_call = cols.add<std::int8_t>("Send Call");
  std::int8_t* recv_call = cols.add<std::int8_t>("Receive Call");
  std::int64_t* send_row = cols.add<std::int64_t>("Send Event");
  std::int64_t* recv_row = cols.add<std::int64_t>("Receive Event");
  {
    py::gil_scoped_release nogil;
    for (std::size_t i = 0; i < n; ++i) {
      const trace::Message& msg = m.messages[i];
      const trace::Event& send = tr.locations[msg.sender].events[msg.send_event];
      const trace::Event& recv = tr.locations[msg.receiver].events[msg.recv_event];
      sender[i] = msg.sender;
      receiver[i] = msg.receiver;
      comm[i] = send.ref;
      tag[i] = send.tag;
      bytes[i] = send.bytes;
      send_time[i] = send.time;
      recv_time[i] = recv.time;
      send_call[i] = op_code(m.calls[msg.sender][msg.send_call].op);
      recv_call[i] = op_code(m.calls[msg.receiver][msg.recv_post_call].op);
      send_row[i] = first_row[msg.sender] + msg.send_event;
      recv_row[i] = first_row[msg.receiver] + msg.recv_event;
    }
  }
  cols.categories("Send Call", op_categories());
  cols.categories("Receive Call", op_categories());
  return cols.done();
}

py::dict region_columns(const TraceData& data) {
  const trace::Definitions& defs = data.trace.defs;
  const std::size_t n = defs.regions.size();
  Columns cols(n);
  std::int8_t* op = cols.add<std::int8_t>("MPI Op");
  bool* mpi = cols.add<bool>("Is MPI");
  std::uint64_t* enters = cols.add<std::uint64_t>("Enters");
  py::list names, files;
  for (std::size_t i = 0; i < n; ++i) {
    const trace::Region& reg = defs.regions[i];
    names.append(text(reg.name));
    files.append(text(reg.file));
    op[i] = op_code(reg.op);
    mpi[i] = reg.is_mpi();
    enters[i] = 0;
  }
  {
    py::gil_scoped_release nogil;
    for (const Location* l : locations_of(data.trace))
      for (const trace::Event& e : l->events)
        if (e.kind == EventKind::Enter && e.ref < n) ++enters[e.ref];
  }
  cols.set("Name", names);
  cols.set("File", files);
  cols.categories("MPI Op", op_categories());
  return cols.done();
}

py::dict location_columns(const TraceData& data) {
  const auto locs = locations_of(data.trace);
  Columns cols(locs.size());
  // A column of one value per location.
  const auto per_location = [&]<typename T>(const char* name, T (*value)(const Location&)) {
    T* out = cols.add<T>(name);
    for (std::size_t i = 0; i < locs.size(); ++i) out[i] = value(*locs[i]);
  };
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  per_location("Process", +[](const Location& l) { return l.rank; });
  per_location("Thread", +[](const Location& l) { return l.thread; });
  per_location("Events", +[](const Location& l) -> std::uint64_t { return l.events.size(); });
  per_location("First Time (s)", +[](const Location& l) { return l.events.empty() ? kNone : l.events.front().time; });
  per_location("Last Time (s)", +[](const Location& l) { return l.events.empty() ? kNone : l.events.back().time; });
  per_location("State Intervals", +[](const Location& l) -> std::uint64_t { return l.states.size(); });
  per_location("OpenMP Intervals", +[](const Location& l) -> std::uint64_t { return l.omp.size(); });
  return cols.done();
}

}  // namespace waitlab::python
