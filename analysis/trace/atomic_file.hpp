// waitlab::trace — writing an output file atomically.
//
// Promise: write_file_atomic(path, ...) writes to "path.tmp" and renames it to `path` only
// when everything was written and flushed. Whatever goes wrong — the temporary cannot be
// created, a write or the close fails (disk full), the writer throws, the rename fails —
// the temporary is removed and nothing under `path` changes: an existing file stays as it
// was, a missing one stays missing. Stream and file-system failures throw InputError
// naming the file (an unwritable output is the user's to fix, exit code 2); an exception
// thrown by the writer itself is rethrown unchanged.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace waitlab::trace {

// `write` fills the stream; a stream left in a failed state counts as a failed write.
void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& write);
void write_file_atomic(const std::string& path, std::string_view content);
// An output that exists only when its analysis ran: writes it atomically when `present`
// (returns true), else removes one left from an earlier run (InputError if that fails).
bool write_or_remove(const std::string& path, bool present, const std::function<void(std::ostream&)>& write);

}  // namespace waitlab::trace
