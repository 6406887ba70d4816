#include "analysis/trace/formats.hpp"

#include <algorithm>
#include <filesystem>

#include "util/error.hpp"
#include "analysis/trace/otf2.hpp"
#include "analysis/trace/paraver.hpp"
#include "analysis/trace/ti.hpp"
#include "analysis/trace/wlt.hpp"

namespace waitlab::trace {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> the_path_alone(const std::string& path) { return {path}; }
std::vector<std::string> no_side_files(const std::string&) { return {}; }
std::string shown_as_given(const std::string& shown, const std::string&) { return shown; }

// ---------------------------------------------------------------- .wlt ----

Trace read_wlt_file(const std::string& path, SkippedKinds*, std::vector<std::string>*) { return read_wlt(path); }

std::vector<std::string> write_wlt_file(const Trace& t, const std::string& path) {
  write_wlt(t, path);
  return {};
}

// ---------------------------------------------------------------- OTF2 ----

// The anchor of an archive given as its directory or as its anchor.
std::string otf2_anchor(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) ? (fs::path(path) / "traces.otf2").string() : path;
}

// The anchor, the archive's directory (it is read as a whole) and every file under it.
std::vector<std::string> otf2_input_files(const std::string& path) {
  std::vector<std::string> files;
  std::error_code ec;
  const std::string anchor = otf2_anchor(path);
  const fs::path dir = fs::path(anchor).parent_path().empty() ? fs::path(".") : fs::path(anchor).parent_path();
  files.push_back(anchor);
  files.push_back(dir.string());
  std::vector<std::string> under;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    under.push_back(it->path().string());
  std::sort(under.begin(), under.end());
  for (auto& f : under)
    if (f != anchor) files.push_back(std::move(f));
  return files;
}

// The archive directory shown with its anchor: "out/traces.otf2".
std::string otf2_shown_path(const std::string& shown, const std::string& written) {
  return shown + otf2_anchor(written).substr(written.size());
}


// The kinds of records left out, by name, and the locations not read, as read_otf2_archive
// says them; a part counts the records of its locations and every location not read (a
// global figure: the same in every part).
constexpr std::string_view kOtf2SkippedLocations = "OTF2 locations (metric, GPU, ...)";

SkippedKinds otf2_skipped(const Otf2ReadStats& st) {
  SkippedKinds skipped;
  for (const auto& [kind, n] : st.skipped_records) skipped.emplace_back("OTF2 " + kind + " records", n);
  if (st.skipped_locations > 0) skipped.emplace_back(kOtf2SkippedLocations, st.skipped_locations);
  return skipped;
}

TracePart read_otf2_archive_part(const std::string& path, Rank first, Rank last, SkippedKinds* skipped,
                                 std::vector<std::string>*) {
  Otf2ReadStats st;
  TracePart part = read_otf2_part(otf2_anchor(path), first, last, &st);
  if (skipped) *skipped = otf2_skipped(st);
  return part;
}

Trace read_otf2_archive(const std::string& path, SkippedKinds* skipped, std::vector<std::string>*) {
  Otf2ReadStats st;
  Trace t = read_otf2(otf2_anchor(path), &st);
  if (skipped) *skipped = otf2_skipped(st);
  return t;
}

SkippedKinds merge_otf2_skipped(const std::vector<SkippedKinds>& parts) {
  Otf2ReadStats st;
  const std::string_view prefix = "OTF2 ", suffix = " records";
  for (const SkippedKinds& part : parts)
    for (const auto& [what, n] : part) {
      if (what == kOtf2SkippedLocations)
        st.skipped_locations = n;
      else
        st.skipped_records[what.substr(prefix.size(), what.size() - prefix.size() - suffix.size())] += n;
    }
  return otf2_skipped(st);
}
std::vector<std::uint64_t> otf2_archive_event_counts(const std::string& path) {
  return otf2_record_counts(otf2_anchor(path));
}

std::vector<std::string> write_otf2_archive(const Trace& t, const std::string& path) {
  write_otf2(t, path);
  return otf2_losses(t);
}

// ---------------------------------------------------------------- Paraver ----

// The .prv (or .prv.gz) and its .pcf and .row when present.
std::vector<std::string> paraver_input_files(const std::string& path) {
  std::vector<std::string> files = {path};
  std::error_code ec;
  std::string base = path;
  base.resize(base.size() - (path.ends_with(".prv.gz") ? 7 : 4));
  for (const char* side : {".pcf", ".row"})
    if (fs::exists(base + side, ec)) files.push_back(base + side);
  return files;
}

std::vector<std::string> paraver_side_files(const std::string& out) {
  return {fs::path(out).replace_extension(".pcf").string(), fs::path(out).replace_extension(".row").string()};
}

Trace read_paraver_file(const std::string& path, SkippedKinds* skipped, std::vector<std::string>* warnings) {
  ParaverReadStats st;
  Trace t = read_paraver(path, &st);
  if (skipped) *skipped = std::move(st.skipped);
  if (warnings && st.ends_early) warnings->push_back(paraver_ends_early(path, st));
  return t;
}

// Paraver per location (read_paraver_part): every part reads every record (the other tasks'
// define regions and collective roots), so each says what was left out of the whole trace
// (but the requests completed without start of its own tasks only: merge_paraver_skipped sums
// them) and what it found suspect; the weights are those of a part without tasks: the records
// per task.
TracePart read_paraver_tasks(const std::string& path, Rank first, Rank last, SkippedKinds* skipped,
                             std::vector<std::string>* warnings) {
  ParaverReadStats st;
  TracePart part = read_paraver_part(path, first, last, &st);
  if (skipped) *skipped = std::move(st.skipped);
  if (warnings && st.ends_early) warnings->push_back(paraver_ends_early(path, st));
  return part;
}
std::vector<std::uint64_t> paraver_event_counts(const std::string& path) {
  return read_paraver_part(path, 0, 0).event_counts;
}

// ---------------------------------------------------------------- TI ----

std::vector<std::string> ti_side_files(const std::string& out) { return {out + "_files"}; }

// The index and the directory of its rank files: "out.ti + out.ti_files/".
std::string ti_shown_path(const std::string& shown, const std::string&) { return shown + " + " + shown + "_files/"; }

std::string ti_unreadable(const std::string& path) {
  return path + ": read as a time-independent (TI) trace, which has no times: replay it (`waitlab replay " + path +
         "`) and analyse the simulated trace, or convert it (`waitlab convert`) to give it logical times";
}

std::vector<FormatDescriptor> make_formats() {
  std::vector<FormatDescriptor> f;
  f.push_back({.id = TraceFormat::Wlt,
               .name = "wlt",
               .description = "waitlab's native trace (.wlt): every field of the event model, bit-exact",
               .expected = "a .wlt file",
               .input_extensions = {".wlt"},
               .output_extensions = {".wlt"},
               .cannot_hold = "nothing",
               .input_files = the_path_alone,
               .side_files = no_side_files,
               .shown_path = shown_as_given,
               .read = read_wlt_file,
               .read_part = [](const std::string& path, Rank first, Rank last, SkippedKinds*,
                               std::vector<std::string>*) { return read_wlt_part(path, first, last); },
               .event_counts = wlt_event_counts,
               .write = write_wlt_file});
  f.push_back({.id = TraceFormat::Otf2,
               .name = "OTF2",
               .description = "an OTF2 archive (its anchor .otf2 or its directory), as Score-P writes it",
               .expected = "an OTF2 archive",
               .input_extensions = {".otf2"},
               .directory_anchor = "traces.otf2",
               .any_other_output = true,
               .cannot_hold = "ground truth, trace attributes, MPI_Irecv posting details, state intervals, counter "
                              "samples without counters, irregular thread numbers",
               .input_files = otf2_input_files,
               .side_files = no_side_files,
               .shown_path = otf2_shown_path,
               .read = read_otf2_archive,
               .read_part = read_otf2_archive_part,
               .merge_skipped = merge_otf2_skipped,
               .event_counts = otf2_archive_event_counts,
               .write = write_otf2_archive});
  f.push_back({.id = TraceFormat::Paraver,
               .name = "Paraver",
               .description = "a Paraver trace (.prv or .prv.gz, with its .pcf and .row), as Extrae writes it",
               .expected = "a Paraver .prv or .prv.gz file",
               .input_extensions = {".prv", ".prv.gz"},
               .output_extensions = {".prv"},
               .cannot_hold = "ground truth, attributes, communicator names, region source files, unmatched "
                              "messages and events outside Extrae's encoding",
               .input_files = paraver_input_files,
               .side_files = paraver_side_files,
               .shown_path = shown_as_given,
               .read = read_paraver_file,
               .read_part = read_paraver_tasks,
               .merge_skipped = merge_paraver_skipped,
               .event_counts = paraver_event_counts,
               .write = write_paraver});
  f.push_back({.id = TraceFormat::Ti,
               .name = "TI",
               .description = "an SMPI time-independent trace (an index of rank files or a single file; .ti or .txt "
                              "when written)",
               .expected = "a TI trace",
               .any_other_input = true,
               .output_extensions = {".ti", ".txt"},
               .timestamps = false,
               .cannot_hold = "timestamps, MPI call durations, communicators other than MPI_COMM_WORLD, ground truth",
               .input_files = ti_files,
               .side_files = ti_side_files,
               .shown_path = ti_shown_path,
               .why_unreadable = ti_unreadable,
               .why_unwritable = "TI traces are written from action streams (waitlab convert does it)"});
  return f;
}

}  // namespace

const std::vector<FormatDescriptor>& formats() {
  static const std::vector<FormatDescriptor> table = make_formats();
  return table;
}

const FormatDescriptor& descriptor(TraceFormat f) {
  const auto& all = formats();
  return *std::find_if(all.begin(), all.end(), [f](const FormatDescriptor& d) { return d.id == f; });
}

}  // namespace waitlab::trace
