// waitlab::InputError — the one exception type for bad user input.
//
// Promise: every reader, loader and parser throws InputError with a message that
// names the file and the position (line:column, rank, event index) and says what was
// expected. The command line prints what() and exits with code 2. Anything else that
// escapes is an internal failure (exit code 1).
#pragma once

#include <stdexcept>
#include <string>

namespace waitlab {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Bad input found by every process of the replay engine at the same point of an analysis, with
// the same message (a cut that finds nothing: analysis/timeresolved/cut.hpp): waitlab-mpi says it
// once and ends every process normally, as for an error found before the analyses.
struct AgreedInputError : InputError {
  using InputError::InputError;
};

// An output that could not be written because of the host (a full disk, a file size limit):
// never a mere warning, even for an output that is only a view (report.html, a picture).
struct WriteError : InputError {
  using InputError::InputError;
};

}  // namespace waitlab
