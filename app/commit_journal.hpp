// waitlab::app — the journal of a commit of outputs (app/output_dir.hpp): DIR/.waitlab-commit
// lists the renames that put a complete new result in place; written whole (flushed to disk)
// before DIR changes, so that a commit a SIGKILL, a crash or a power cut stopped half-way can
// be rolled forward by the next waitlab that opens DIR or reads a file in it (app/inputs.hpp).
#pragma once

#include <string>

namespace waitlab::app {

inline constexpr const char* kCommitJournal = ".waitlab-commit";
inline constexpr const char* kCommitJournalHead = "waitlab-commit 1";

// Writes the journal at `path` whole (a temporary file, flushed to disk, renamed into place);
// InputError naming `given` (the directory as the user wrote it) if it cannot.
void write_commit_journal(const std::string& path, const std::string& text, const std::string& given);

// Finishes a commit into `dir` that a SIGKILL, a crash or a power cut stopped half-way: its
// journal (DIR/.waitlab-commit, written once every output is complete and before DIR changes)
// is rolled forward, so that DIR holds the complete new result. True if there was one. Every
// OutputDir does this for its directory first, and Inputs for the directories of its inputs.
bool recover_commit(const std::string& dir);

}  // namespace waitlab::app
