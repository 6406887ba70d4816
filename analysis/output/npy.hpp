// waitlab::output — a matrix as a NumPy .npy file (numpy.load reads it; no NumPy needed to write).
#pragma once

#include <cstddef>
#include <ostream>
#include <vector>

namespace waitlab::output {

// NumPy's .npy format, version 1.0: magic, header length, a Python dict literal padded with
// spaces to a multiple of 64 bytes, then `values` as little-endian float32, shape rows × cols,
// row-major (values.size() == rows · cols).
void write_npy_f32(std::ostream& os, std::size_t rows, std::size_t cols, const std::vector<float>& values);

}  // namespace waitlab::output
