// Internal to scenarios/ (not a public header): what the loader asks of the preparation
// (prepare.cpp, where prepare() of scenario.hpp lives) to check a scenario before it runs.
#pragma once

#include "scenarios/scenario.hpp"

namespace waitlab::scenarios::detail {

// Impossible combinations (more ranks than cores, options a model rejects) surface when the
// models are built: builds them once (prepare()) so that nothing starts on a bad scenario.
// Without `read_trace`, a `trace` workload is only checked for its options, its file and the
// platform: reading a big trace twice would double the start-up time, and prepare() reads it
// before anything runs. Throws InputError.
void check_models(const Scenario& s, bool read_trace);

}  // namespace waitlab::scenarios::detail
