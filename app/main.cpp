// The waitlab executable: everything lives in wl_app (app/commands.hpp) so tests can call it.
#include <iostream>

#include "app/commands.hpp"

int main(int argc, char** argv) {
  return waitlab::app::main(argc, argv, std::cout, std::cerr);
}
