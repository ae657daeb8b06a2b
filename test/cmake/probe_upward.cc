// Must not compile: controller/ is three floors above discovery/, which a target linking liken_discovery sees.
#include "controller/node_reconciler.h"
