// Which generation a pool goes out under: the arithmetic of spec.pool.generation, apart from any I/O.
#pragma once

#include <cstdint>
#include <optional>

namespace liken::controller {

// What one pass knows about a pool when it picks the generation.
struct PoolGenerationFacts {
  // The highest spec.pool.generation among the pool's slices the server holds now (0: none).
  int64_t server_generation = 0;
  // The server holds exactly the wanted slices (by name) with the wanted devices.
  bool server_matches = false;
  // The generation this process last published this very content under, when it may still be finished
  // (none of that generation's slices was deleted behind our back); nullopt otherwise.
  std::optional<int64_t> unfinished_generation;
  // The highest generation this process has published for the pool (0: none).
  int64_t highest_published = 0;
};

// Picks the pool's generation. An unfinished generation the server has seen nothing newer than is
// finished (the slices that lag behind are written without another bump); otherwise a server that
// already matches keeps its generation, and anything else goes out one above every generation seen, so
// that a consumer never mixes old and new slices of the pool. Thread-safe (pure).
int64_t PickPoolGeneration(const PoolGenerationFacts& facts);

}  // namespace liken::controller
