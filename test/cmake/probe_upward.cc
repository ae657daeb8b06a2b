// Must not compile: controller/ is two floors above discovery/, which a target linking liken_discovery sees.
#include "controller/node_reconciler.h"
