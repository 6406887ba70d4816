#include "analysis/trace/otf2_check.hpp"

#include <otf2/otf2.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <vector>

namespace waitlab::trace::otf2_check {
namespace {

namespace fs = std::filesystem;

// OTF2's buffer encoding (libotf2's OTF2_Buffer.h; the values are the file format's).
constexpr std::uint8_t kEndOfChunk = 0;
constexpr std::uint8_t kEndOfBuffer = 1;
constexpr std::uint8_t kEndOfFile = 2;
constexpr std::uint8_t kChunkHeader = 3;
constexpr std::uint8_t kTimestamp = 5;
constexpr std::uint8_t kAttributeList = 6;
constexpr std::uint8_t kBigEndian = 0x23;
constexpr std::uint8_t kLittleEndian = 0x42;
constexpr std::uint64_t kChunkHeaderSize = 18;  // header byte, byte order, first and last event number
constexpr std::uint8_t kAnchorFormat = 3;       // the format OTF2 3.0 writes; later ones only append
// The record types whose count libotf2 allocates by: a local mapping table (OTF2_IdMap: 8 bytes
// an id, 16 a pair when sparse), a Group of the global or local definitions (8 bytes a
// member), a ProgramBegin event (4 bytes an argument).
constexpr std::uint8_t kLocalMappingTable = 5;
constexpr std::uint8_t kGroup = 18;
constexpr std::uint8_t kProgramBegin = 83;
// The event types OTF2 1.0 stored as one compressed integer with no record length: Enter,
// Leave, MpiIsendComplete, MpiIrecvRequest, MpiRequestTest, MpiRequestCancelled, OmpFork,
// OmpTaskCreate, OmpTaskSwitch, OmpTaskComplete. Every later type carries a length (that is
// how an older reader skips a type it does not know), so the list cannot grow.
constexpr std::uint8_t kSingletonEvents[] = {12, 13, 16, 17, 20, 21, 24, 28, 29, 30};

constexpr std::array<bool, 256> kSingleton = [] {
  std::array<bool, 256> is{};
  for (const std::uint8_t type : kSingletonEvents) is[type] = true;
  return is;
}();

// What is wrong with the file; thrown inside this file only.
struct Bad {
  std::string what;
};

std::string at(std::uint64_t byte) {
  return " at byte " + std::to_string(byte);
}

// A cursor over bytes [pos, end) of a file, held in `chunk` from file offset `origin`;
// integers of more than one byte in the chunk's byte order. `end_name` says where the bytes
// end in messages ("the end of the record").
class Bytes {
 public:
  Bytes(const std::uint8_t* chunk, std::uint64_t origin, std::uint64_t end, const char* end_name)
      : chunk_(chunk), origin_(origin), pos_(origin), end_(end), end_name_(end_name) {}

  std::uint64_t pos() const { return pos_; }
  std::uint64_t end() const { return end_; }
  std::uint64_t left() const { return end_ - pos_; }
  void big_endian(bool big) { big_ = big; }
  std::uint8_t peek() const { return chunk_[pos_ - origin_]; }
  void skip(std::uint64_t n) { pos_ += n; }

  void need(std::uint64_t n, const char* what) const {
    if (n > left()) throw Bad{std::string(what) + at(pos_) + " runs past " + end_name_ + at(end_)};
  }
  std::uint8_t u8(const char* what) {
    need(1, what);
    return chunk_[pos_++ - origin_];
  }
  // An unsigned integer of n ≤ 8 bytes.
  std::uint64_t fixed(unsigned n, const char* what) {
    need(n, what);
    std::uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i) {
      const std::uint64_t b = chunk_[pos_ - origin_ + i];
      v |= big_ ? b << (8 * (n - 1 - i)) : b << (8 * i);
    }
    pos_ += n;
    return v;
  }
  // OTF2's compressed integer: a size byte (0: the value 0, 0xff: all ones), then that many
  // bytes; at most `max` of them (4 for 32-bit fields, 8 for 64-bit ones).
  std::uint64_t compressed(unsigned max, const char* what) {
    const std::uint64_t p = pos_;
    const std::uint8_t size = u8(what);
    if (size == 0) return 0;
    if (size == 0xff) return max == 4 ? std::uint64_t{0xffffffff} : ~std::uint64_t{0};
    if (size > max)
      throw Bad{std::string(what) + at(p) + " is a compressed integer of " + std::to_string(size) +
                " bytes (at most " + std::to_string(max) + ")"};
    pos_ = p;
    need(1 + std::uint64_t{size}, what);
    pos_ = p + 1;
    return fixed(size, what);
  }
  // A string up to and with its NUL byte.
  std::string_view str(const char* what) {
    const auto* from = chunk_ + (pos_ - origin_);
    const void* nul = std::memchr(from, 0, static_cast<std::size_t>(left()));
    if (!nul)
      throw Bad{std::string(what) + at(pos_) + " has no terminating NUL byte before " + end_name_ + at(end_)};
    const std::string_view s(reinterpret_cast<const char*>(from),
                             static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - from));
    pos_ += s.size() + 1;
    return s;
  }
  // The next n bytes as a cursor of their own.
  Bytes sub(std::uint64_t n, const char* end_name) const {
    Bytes b(chunk_, origin_, pos_ + n, end_name);
    b.pos_ = pos_;
    b.big_ = big_;
    return b;
  }

 private:
  const std::uint8_t* chunk_;
  std::uint64_t origin_;
  std::uint64_t pos_;
  std::uint64_t end_;
  const char* end_name_;
  bool big_ = false;
};

// `count` compressed integers of at most `max` bytes each that the record `name` at `record_at`
// announces, walked to the end: libotf2 allocates for all of them first and then reads them
// without looking at where the record ends.
void counted(Bytes& r, std::uint64_t count, unsigned max, const char* name, std::uint64_t record_at,
             const char* things) {
  const std::string record = std::string("the ") + name + " record" + at(record_at) + " announces " +
                             std::to_string(count) + " " + things;
  if (count > r.left())  // each takes at least its size byte
    throw Bad{record + ", more than its " + std::to_string(r.left()) + " bytes left can hold"};
  for (std::uint64_t i = 0; i < count; ++i) {
    if (r.left() == 0)
      throw Bad{record + ", but the record ends" + at(r.pos()) + " after " + std::to_string(i)};
    const std::uint8_t size = r.peek();
    if (size != 0 && size != 0xff && size > max)
      throw Bad{record + ", but value " + std::to_string(i) + at(r.pos()) + " is a compressed integer of " +
                std::to_string(size) + " bytes (at most " + std::to_string(max) + ")"};
    const std::uint64_t len = size == 0 || size == 0xff ? 1 : 1 + std::uint64_t{size};
    if (len > r.left())
      throw Bad{record + ", but the record ends" + at(r.end()) + " inside value " + std::to_string(i)};
    r.skip(len);
  }
}

// An attribute list before an event: its number of entries, then per entry the attribute id
// (compressed), the OTF2_Type and the value (fixed-size for 8, 16-bit integers and floats,
// compressed otherwise, as libotf2's otf2_attribute_value_read_from_buffer reads it).
void attribute_list(Bytes& r, std::uint64_t record_at) {
  const std::uint64_t count = r.compressed(4, "the number of attributes");
  const std::string record =
      "the attribute list" + at(record_at) + " announces " + std::to_string(count) + " attributes";
  if (count > r.left() / 3)  // an id, a type and a value: at least 3 bytes
    throw Bad{record + ", more than its " + std::to_string(r.left()) + " bytes left can hold"};
  for (std::uint64_t i = 0; i < count; ++i) {
    try {
      r.compressed(4, "the attribute id");
      switch (r.u8("the attribute type")) {
        case OTF2_TYPE_UINT8:
        case OTF2_TYPE_INT8:
          r.need(1, "the value");
          r.skip(1);
          break;
        case OTF2_TYPE_UINT16:
        case OTF2_TYPE_INT16:
          r.need(2, "the value");
          r.skip(2);
          break;
        case OTF2_TYPE_FLOAT:
          r.need(4, "the value");
          r.skip(4);
          break;
        case OTF2_TYPE_DOUBLE:
          r.need(8, "the value");
          r.skip(8);
          break;
        case OTF2_TYPE_UINT64:
        case OTF2_TYPE_INT64:
        case OTF2_TYPE_LOCATION:
          r.compressed(8, "the value");
          break;
        case OTF2_TYPE_UINT32:
        case OTF2_TYPE_INT32:
        case OTF2_TYPE_STRING:
        case OTF2_TYPE_ATTRIBUTE:
        case OTF2_TYPE_REGION:
        case OTF2_TYPE_GROUP:
        case OTF2_TYPE_METRIC:
        case OTF2_TYPE_COMM:
        case OTF2_TYPE_PARAMETER:
        case OTF2_TYPE_RMA_WIN:
        case OTF2_TYPE_SOURCE_CODE_LOCATION:
        case OTF2_TYPE_CALLING_CONTEXT:
        case OTF2_TYPE_INTERRUPT_GENERATOR:
        case OTF2_TYPE_IO_FILE:
        case OTF2_TYPE_IO_HANDLE:
          r.compressed(4, "the value");
          break;
        default:  // later definition references: compressed 64-bit, as libotf2 reads them
          r.compressed(8, "the value");
      }
    } catch (const Bad& b) {
      throw Bad{record + ", but in attribute " + std::to_string(i) + " " + b.what};
    }
  }
}

// A record's name in messages.
std::string record_name(FileKind kind, std::uint8_t type) {
  if (kind == FileKind::LocalDefinitions && type == kLocalMappingTable) return "the MappingTable record";
  if (kind != FileKind::Events && type == kGroup) return "the Group record";
  if (kind == FileKind::Events && type == kProgramBegin) return "the ProgramBegin record";
  if (kind == FileKind::Events && type == kAttributeList) return "the attribute list";
  return "the record of type " + std::to_string(type);
}

// The contents of one record (after its type and length) that libotf2 allocates by.
void check_record(FileKind kind, std::uint8_t type, std::uint64_t record_at, Bytes& r) {
  if (kind == FileKind::LocalDefinitions && type == kLocalMappingTable) {
    r.u8("the mapping type");
    const std::uint64_t ids = r.compressed(8, "the number of ids");
    const std::uint8_t mode = r.u8("the mapping mode");
    // libotf2 refuses a map of no ids or of another mode before allocating.
    if (ids == 0 || (mode != OTF2_ID_MAP_DENSE && mode != OTF2_ID_MAP_SPARSE)) return;
    if (mode == OTF2_ID_MAP_SPARSE && ids > r.left() / 2)  // (local, global) pairs
      throw Bad{"the MappingTable record" + at(record_at) + " announces " + std::to_string(ids) +
                " id pairs, more than its " + std::to_string(r.left()) + " bytes left can hold"};
    counted(r, mode == OTF2_ID_MAP_SPARSE ? 2 * ids : ids, 8, "MappingTable", record_at,
            mode == OTF2_ID_MAP_SPARSE ? "ids (in pairs)" : "ids");
  } else if (kind != FileKind::Events && type == kGroup) {
    r.compressed(4, "the group id");
    r.compressed(4, "the group name");
    r.u8("the group type");
    const std::uint64_t members = r.compressed(4, "the number of members");
    counted(r, members, 8, "Group", record_at, "members");
  } else if (kind == FileKind::Events && type == kProgramBegin) {
    r.compressed(4, "the program name");
    const std::uint64_t arguments = r.compressed(4, "the number of arguments");
    counted(r, arguments, 4, "ProgramBegin", record_at, "arguments");
  } else if (kind == FileKind::Events && type == kAttributeList) {
    attribute_list(r, record_at);
  }
}

// What may follow the end-of-file record at `record_at`: OTF2's writer ends the file with one
// end-of-buffer byte (1) after it, and a writer that wrote its last chunk whole would pad it
// with end-of-chunk bytes (0) up to the chunk's end. Any other byte, or any byte past that
// chunk, is not OTF2's: libotf2 stops reading at the end-of-file record and would never see it.
void after_end_of_file(Bytes& c, std::uint64_t record_at, std::uint64_t size) {
  std::uint64_t end = record_at + 1;
  if (c.left() > 0 && c.peek() == kEndOfBuffer) {
    c.skip(1);
    ++end;
  }
  bool padding = c.end() == size;
  while (padding && c.left() > 0) {
    padding = c.peek() == kEndOfChunk;
    c.skip(1);
  }
  if (!padding)
    throw Bad{"the file goes on for " + std::to_string(size - end) + (size - end == 1 ? " byte" : " bytes") +
              " after its end" + at(end) + " (the end-of-file record" + at(record_at) + ")"};
}

std::string walk_records(std::ifstream& in, std::uint64_t size, FileKind kind, std::uint64_t chunk_size) {
  const bool events = kind == FileKind::Events;
  std::vector<std::uint8_t> chunk(static_cast<std::size_t>(std::min(chunk_size, size)));
  std::uint64_t end_of_chunk_at = 0;  // the end-of-chunk record that asked for the next chunk
  for (std::uint64_t origin = 0;; origin += chunk_size) {
    if (origin >= size)
      throw Bad{"the file ends" + at(size) + " where the end-of-chunk record" + at(end_of_chunk_at) +
                " asks for another chunk"};
    const std::uint64_t n = std::min(chunk_size, size - origin);
    if (!in.read(reinterpret_cast<char*>(chunk.data()), static_cast<std::streamsize>(n)))
      throw Bad{"cannot read the file" + at(origin)};
    const bool last = origin + n == size;
    Bytes c(chunk.data(), origin, origin + n, last ? "the end of the file" : "the end of its chunk");
    c.need(kChunkHeaderSize, "the chunk header");
    if (c.peek() != kChunkHeader)
      throw Bad{"no chunk header" + at(origin) + " (chunks of " + std::to_string(chunk_size) + " bytes)"};
    c.skip(1);
    const std::uint8_t order = c.u8("the byte order");
    if (order != kBigEndian && order != kLittleEndian)
      throw Bad{"the chunk header" + at(origin) + " gives no byte order (" + std::to_string(order) + ")"};
    c.big_endian(order == kBigEndian);
    c.skip(kChunkHeaderSize - 2);
    for (;;) {
      if (events && c.left() > 0 && c.peek() == kTimestamp) {
        c.need(9, "the timestamp");
        c.skip(9);
      }
      if (c.left() == 0)
        throw Bad{last
                      ? "the file ends" + at(size) + " without an end-of-file record"
                      : "the chunk" + at(origin) + " ends" + at(c.end()) + " without an end-of-chunk record"};
      const std::uint64_t record_at = c.pos();
      const std::uint8_t type = c.u8("the record type");
      if (type == kEndOfChunk) {
        end_of_chunk_at = record_at;
        break;
      }
      if (type == kEndOfFile) {
        after_end_of_file(c, record_at, size);
        return "";
      }
      if (events && kSingleton[type]) {  // most records of a trace (Enter, Leave): the quick way first
        const std::uint8_t bytes = c.left() > 0 ? c.peek() : 0xfe;
        const std::uint64_t len = bytes == 0 || bytes == 0xff ? 1 : 1 + std::uint64_t{bytes};
        if (bytes <= 8 || bytes == 0xff) {
          if (len <= c.left()) {
            c.skip(len);
            continue;
          }
        }
        c.compressed(8, "the value of an event record");  // says what is wrong
        continue;
      }
      std::uint64_t length = c.u8("the record length");
      if (length == 0xff) length = c.fixed(8, "the record length");
      if (length > c.left())
        throw Bad{record_name(kind, type) + at(record_at) + " is " + std::to_string(length) +
                  " bytes long, past " + (last ? "the end of the file" : "the end of its chunk") +
                  at(c.end())};
      Bytes r = c.sub(length, "the end of the record");
      check_record(kind, type, record_at, r);
      c.skip(length);
    }
  }
}

}  // namespace

std::string check_anchor(const std::string& path, Layout& layout) {
  layout = Layout{};
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return "";  // OTF2 says what is missing
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return "";
  if (size == 0) return "the anchor file is empty";
  if (size > OTF2_CHUNK_SIZE_MIN)
    return "the anchor file has " + std::to_string(size) + " bytes, more than the " +
           std::to_string(OTF2_CHUNK_SIZE_MIN) + " an OTF2 writer can write";
  std::vector<std::uint8_t> data(static_cast<std::size_t>(size));
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(size)))
    return "cannot read the anchor file";
  try {
    Bytes b(data.data(), 0, size, "the end of the anchor file");
    if (b.u8("the chunk header") != kChunkHeader)
      throw Bad{"the anchor file has no OTF2 chunk header at byte 0"};
    const std::uint8_t order = b.u8("the byte order");
    if (order != kBigEndian && order != kLittleEndian)
      throw Bad{"the anchor file gives no byte order at byte 1 (" + std::to_string(order) + ")"};
    b.big_endian(order == kBigEndian);
    if (b.str("the magic string") != "OTF2")
      throw Bad{"the anchor file does not start with the magic string OTF2"};
    const std::uint64_t format_at = b.pos();
    const std::uint8_t format = b.u8("the anchor format");
    if (format == 0) throw Bad{"the anchor file gives anchor format 0" + at(format_at)};
    b.need(38, "the block of formats, chunk sizes, substrate and counts");
    b.skip(4);  // trace format, OTF2 version
    const std::uint64_t chunks_at = b.pos();
    layout.event_chunk = b.fixed(8, "the event chunk size");
    layout.definition_chunk = b.fixed(8, "the definition chunk size");
    for (const auto& [chunk, what] :
         {std::pair<std::uint64_t, const char*>{layout.event_chunk, "event"},
          std::pair<std::uint64_t, const char*>{layout.definition_chunk, "definition"}})
      if (chunk < OTF2_CHUNK_SIZE_MIN || chunk > OTF2_CHUNK_SIZE_MAX)
        throw Bad{"the anchor file's " + std::string(what) + " chunk size" + at(chunks_at) + " is " +
                  std::to_string(chunk) + " bytes (OTF2 allows " + std::to_string(OTF2_CHUNK_SIZE_MIN) +
                  " to " + std::to_string(OTF2_CHUNK_SIZE_MAX) + ")"};
    const std::uint8_t substrate = b.u8("the file substrate");
    if (substrate != OTF2_SUBSTRATE_POSIX && substrate != OTF2_SUBSTRATE_SION &&
        substrate != OTF2_SUBSTRATE_NONE)
      throw Bad{"the anchor file gives an unknown file substrate " + std::to_string(substrate) +
                at(b.pos() - 1)};
    const std::uint8_t compression = b.u8("the compression");
    if (compression != OTF2_COMPRESSION_NONE && compression != 2 /* OTF2_COMPRESSION_ZLIB, deprecated */)
      throw Bad{"the anchor file gives an unknown compression " + std::to_string(compression) +
                at(b.pos() - 1)};
    b.skip(16);  // number of locations, of global definitions
    b.str("the machine name");
    b.str("the creator");
    b.str("the description");
    if (format > 1) {
      const std::uint64_t count_at = b.pos();
      const std::uint64_t properties = b.fixed(4, "the number of properties");
      if (properties > b.left() / 2)  // a name and a value, each at least its NUL byte
        throw Bad{"the anchor file announces " + std::to_string(properties) + " properties" + at(count_at) +
                  ", more than the " + std::to_string(b.left()) + " bytes after it can hold"};
      for (std::uint64_t i = 0; i < properties; ++i) {
        b.str("a property name");
        b.str("a property value");
      }
      b.fixed(8, "the trace identifier");
    }
    if (format > 2) b.fixed(8, "the numbers of snapshots and thumbnails");
    if (format == kAnchorFormat && b.u8("the end-of-file record") != kEndOfFile)
      throw Bad{"the anchor file has no end-of-file record" + at(b.pos() - 1)};
    layout.plain_files = substrate == OTF2_SUBSTRATE_POSIX && compression == OTF2_COMPRESSION_NONE;
  } catch (const Bad& b) {
    layout = Layout{};
    return b.what;
  }
  return "";
}

std::string check_records(const std::string& path, FileKind kind, const Layout& layout) {
  if (!layout.plain_files) return "";
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return "";  // OTF2 says what is missing
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return "";
  if (size == 0) return "the file is empty";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open the file";
  try {
    return walk_records(in, size, kind,
                        kind == FileKind::Events ? layout.event_chunk : layout.definition_chunk);
  } catch (const Bad& b) {
    return b.what;
  }
}

}  // namespace waitlab::trace::otf2_check
