// The waitlab executable: everything lives in wl_app (app/commands.hpp) so tests can call it.
#include <iostream>

#include "app/commands.hpp"
#include "util/signals.hpp"

int main(int argc, char** argv) {
  // SIGINT, SIGTERM and SIGHUP stop the simulations and discard unfinished outputs (util/signals.hpp).
  waitlab::util::install_signal_handlers();
  return waitlab::app::main(argc, argv, std::cout, std::cerr);
}
