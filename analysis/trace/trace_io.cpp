#include "analysis/trace/trace_io.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "util/error.hpp"

namespace waitlab::trace {

namespace fs = std::filesystem;

namespace {

bool ends_with_any(const std::string& s, const std::vector<std::string_view>& suffixes) {
  for (const auto suffix : suffixes)
    if (s.ends_with(suffix)) return true;
  return false;
}

// What an input may be, for the messages: "a .wlt file, an OTF2 archive, ... or a TI trace".
std::string expected_inputs() {
  std::string list;
  const auto& all = formats();
  for (std::size_t i = 0; i < all.size(); ++i)
    list += (i == 0 ? "" : i + 1 < all.size() ? ", " : " or ") + std::string(all[i].expected);
  return list;
}

// The files that make a directory an input: "traces.otf2".
std::string directory_anchors() {
  std::string list;
  for (const auto& f : formats())
    if (!f.directory_anchor.empty()) list += (list.empty() ? "" : " or ") + std::string(f.directory_anchor);
  return list;
}

// The descriptor of a format read per location; one without such a reader is refused as
// read_trace refuses it.
const FormatDescriptor& part_reader(const std::string& path) {
  const FormatDescriptor& f = descriptor(format_of_input(path));
  if (!f.read_part || !f.event_counts) throw InputError(f.why_unreadable(path));
  return f;
}

}  // namespace

TraceFormat format_of_input(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& f : formats())
      if (!f.directory_anchor.empty() && fs::exists(fs::path(path) / f.directory_anchor, ec)) return f.id;
    throw InputError(path + ": a directory without " + directory_anchors() + " (expected " + expected_inputs() + ")");
  }
  for (const auto& f : formats())
    if (ends_with_any(path, f.input_extensions)) return f.id;
  if (!fs::exists(path, ec)) throw InputError(path + ": no such trace (expected " + expected_inputs() + ")");
  for (const auto& f : formats())
    if (f.any_other_input) return f.id;
  throw InputError(path + ": not a trace (expected " + expected_inputs() + ")");
}

TraceFormat format_of_output(const std::string& path) {
  for (const auto& f : formats())
    if (ends_with_any(path, f.output_extensions)) return f.id;
  for (const auto& f : formats())
    if (f.any_other_output) return f.id;
  throw InputError(path + ": no trace format writes such a path");
}

std::vector<std::string> input_files(const std::string& path) {
  return descriptor(format_of_input(path)).input_files(path);
}

Trace read_trace(const std::string& path, SkippedKinds* skipped, std::vector<std::string>* warnings) {
  const FormatDescriptor& f = descriptor(format_of_input(path));
  if (!f.read) throw InputError(f.why_unreadable(path));
  return f.read(path, skipped, warnings);
}

TracePart read_trace_part(const std::string& path, Rank first, Rank last, SkippedKinds* skipped,
                          std::vector<std::string>* warnings) {
  const FormatDescriptor& f = part_reader(path);
  if (first < 0 || last < first)
    throw std::invalid_argument(path + ": ranks [" + std::to_string(first) + ", " + std::to_string(last) + ")");
  return f.read_part(path, first, last, skipped, warnings);
}

SkippedKinds merge_skipped(const std::string& path, const std::vector<SkippedKinds>& parts) {
  const FormatDescriptor& f = part_reader(path);
  if (f.merge_skipped) return f.merge_skipped(parts);
  SkippedKinds merged;
  for (const SkippedKinds& part : parts)
    for (const auto& kind : part) {  // (clang 14: a lambda cannot capture a structured binding)
      const auto it = std::find_if(merged.begin(), merged.end(), [&](const auto& m) { return m.first == kind.first; });
      if (it == merged.end())
        merged.push_back(kind);
      else
        it->second += kind.second;
    }
  return merged;
}

std::vector<std::uint64_t> location_event_counts(const std::string& path) {
  return part_reader(path).event_counts(path);
}

std::vector<std::string> write_trace(const Trace& t, const std::string& path) {
  const FormatDescriptor& f = descriptor(format_of_output(path));
  if (!f.write) throw InputError(path + ": " + std::string(f.why_unwritable));
  return f.write(t, path);
}

}  // namespace waitlab::trace
