// Moved to util/error.hpp (issue 31); this forwarding header goes once every file includes
// the new one.
#pragma once
#include "util/error.hpp"
