#include "analysis/output/entry.hpp"

#include "analysis/trace/atomic_file.hpp"

namespace waitlab::output {

void write_table(const std::string& dir, const char* file, bool present,
                 const std::function<void(std::ostream&)>& rows, std::vector<std::string>& written) {
  const std::string path = (std::filesystem::path(dir) / file).string();
  if (trace::write_or_remove(path, present, rows)) written.push_back(path);
}

}  // namespace waitlab::output
