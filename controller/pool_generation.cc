#include "controller/pool_generation.h"

#include <algorithm>

namespace liken::controller {

int64_t PickPoolGeneration(const PoolGenerationFacts& facts) {
  if (facts.unfinished_generation && facts.server_generation <= *facts.unfinished_generation) {
    return *facts.unfinished_generation;
  }
  if (facts.server_matches) return facts.server_generation;
  return std::max(facts.server_generation, facts.highest_published) + 1;
}

}  // namespace liken::controller
