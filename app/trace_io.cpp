#include "app/trace_io.hpp"

#include <filesystem>

#include "analysis/trace/error.hpp"
#include "analysis/trace/otf2.hpp"
#include "analysis/trace/wlt.hpp"

namespace waitlab::app {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

TraceFormat format_of_input(const std::string& path) {
  if (ends_with(path, ".wlt")) return TraceFormat::Wlt;
  if (ends_with(path, ".otf2")) return TraceFormat::Otf2;
  std::error_code ec;
  if (fs::is_directory(path, ec) && fs::exists(fs::path(path) / "traces.otf2", ec)) return TraceFormat::Otf2;
  throw InputError(path + ": unknown trace format (expected a .wlt file, an OTF2 anchor file .otf2 or an OTF2 "
                          "archive directory holding traces.otf2)");
}

TraceFormat format_of_output(const std::string& path) {
  return ends_with(path, ".wlt") ? TraceFormat::Wlt : TraceFormat::Otf2;
}

trace::Trace read_trace(const std::string& path) {
  if (format_of_input(path) == TraceFormat::Wlt) return trace::read_wlt(path);
  std::error_code ec;
  const std::string anchor = fs::is_directory(path, ec) ? (fs::path(path) / "traces.otf2").string() : path;
  return trace::read_otf2(anchor);
}

std::vector<std::string> write_trace(const trace::Trace& t, const std::string& path) {
  if (format_of_output(path) == TraceFormat::Wlt) {
    trace::write_wlt(t, path);
    return {};
  }
  trace::write_otf2(t, path);
  std::vector<std::string> lost;
  std::size_t truth = 0;
  for (const auto& l : t.locations) truth += l.truth.size();
  if (truth > 0)
    lost.push_back("the ground truth of " + std::to_string(truth) +
                   " compute intervals (nominal and injected time by cause): OTF2 has no such record");
  if (!t.attributes.empty())
    lost.push_back(std::to_string(t.attributes.size()) + " trace attributes (scenario, platform, seed, ...)");
  bool irecv_details = false;
  for (const auto& l : t.locations)
    for (const auto& e : l.events)
      irecv_details = irecv_details || (e.kind == trace::EventKind::IrecvPost && (e.peer != trace::kNoRank || e.bytes));
  if (irecv_details) lost.push_back("the source, tag and size of MPI_Irecv requests at posting (OTF2 has them at completion)");
  return lost;
}

}  // namespace waitlab::app
