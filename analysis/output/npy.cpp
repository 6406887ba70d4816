// waitlab::output — a matrix as a NumPy .npy file (npy.hpp).
#include "analysis/output/npy.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace waitlab::output {

void write_npy_f32(std::ostream& os, std::size_t rows, std::size_t cols, const std::vector<float>& values) {
  std::string header = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}), }}", rows, cols);
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  const auto len = static_cast<std::uint16_t>(header.size());
  const char head[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  os.write(head, 8);
  const char len_le[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  os.write(len_le, 2);
  os << header;
  static_assert(sizeof(float) == 4);
  os.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
}

}  // namespace waitlab::output
