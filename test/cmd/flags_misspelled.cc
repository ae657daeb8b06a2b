// A command reads its flags as the fields of its typed struct (cmd/flags.h), so a misspelled flag name does
// not compile. Built twice: as is (the correct spelling compiles), and with LIKEN_MISSPELLED by the test
// cli.misspelled_flag_does_not_compile, which expects the compiler's error naming the misspelled field.
#include <string>

#include "cmd/flags.h"

namespace liken::cmd {

std::string NodeNameOf(const RunFlags& flags) {
#ifdef LIKEN_MISSPELLED
  return flags.node_nmae;
#else
  return flags.node_name;
#endif
}

}  // namespace liken::cmd
