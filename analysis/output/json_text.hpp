// waitlab::output — JSON text for outputs and messages.
//
// Promise: json_text() never fails on a string that is not UTF-8 (a region name read from a
// Paraver .pcf or a .wlt, a path): such bytes become U+FFFD, so a command does not end in an
// internal failure after its work is done. Non-finite numbers are written as null (the JSON
// library's rule); the writers of summary.json keep them out in the first place.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace waitlab::output {

template <class Json>
std::string json_text(const Json& j, int indent = 2) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace waitlab::output
