// waitlab::trace — the structure of an OTF2 archive's files, checked before libotf2 reads them.
//
// libotf2 (3.0.2) trusts the counts inside the files it reads and allocates what they announce
// before it reads what they count: the anchor's number of properties (a calloc of 16 bytes
// each), a mapping table's number of ids (8 or 16 bytes each), a Group's number of members
// (8 bytes each), a ProgramBegin's number of arguments (4 bytes each), and it then reads that
// many values without looking at where the record ends. A few corrupt bytes make it allocate
// gigabytes, spend a minute clearing them, or read past its buffer. The checks here walk a file
// the way libotf2 reads it — chunks of the anchor's chunk size, each with its 18-byte header;
// records of one type byte and a length (one byte, or 0xff and eight), except the ten event
// types OTF2 1.0 stored as one compressed integer; timestamps before events; attribute lists —
// and hold every count to the bytes its record has left, value by value (a compressed integer
// is a size byte and that many bytes). They allocate one chunk (at most OTF2_CHUNK_SIZE_MAX,
// 16 MiB) and read each file once.
//
// A file ends at its end-of-file record (then OTF2's end-of-buffer byte, and at most zero
// padding to the end of its chunk): libotf2 stops there, so any other byte after it is refused.
//
// Promise: each function returns "" for a file OTF2's writer could have written, else one
// line saying what is wrong and at which byte of the file ("the ProgramBegin record at byte
// 46 announces 4294967295 arguments, more than its 52 bytes left can hold"); the caller
// (read_otf2) puts the archive, rank and file in front and throws InputError. A well-formed
// file is never refused: the walk follows OTF2's own rules (the tests hold it to archives
// written by libotf2 with several chunks and every record kind). Files of an archive whose
// anchor says SION or no substrate, or zlib compression, are not walked (anchor_layout says
// so in Layout::plain_files): only the anchor is checked then.
#pragma once

#include <cstdint>
#include <string>

namespace waitlab::trace::otf2_check {

// What the anchor file says about the archive's other files.
struct Layout {
  std::uint64_t event_chunk = 0;       // chunk size of the .evt files, bytes
  std::uint64_t definition_chunk = 0;  // chunk size of traces.def and the local .def files
  bool plain_files = false;            // POSIX substrate, no compression: the files can be walked
};

// The anchor file (traces.otf2): its chunk header, magic, formats, chunk sizes (OTF2's
// [256 KiB, 16 MiB]), file substrate and compression, strings, and the number of properties
// against the bytes that follow. An anchor is at most 256 KiB (OTF2's writer cannot write a
// longer one), so that is all this reads.
std::string check_anchor(const std::string& path, Layout& layout);

enum class FileKind { GlobalDefinitions, LocalDefinitions, Events };
// A traces.def, a local <location>.def or a <location>.evt file.
std::string check_records(const std::string& path, FileKind kind, const Layout& layout);

}  // namespace waitlab::trace::otf2_check
