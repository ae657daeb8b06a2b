// Compiles: discovery/ links apis/ and common/, so a target linking liken_discovery sees all three.
#include "apis/resource_slice.h"
#include "common/log.h"
#include "discovery/scanner.h"
