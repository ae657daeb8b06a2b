// Must not compile: cdi/ is on discovery/'s floor, and liken_discovery does not link it.
#include "cdi/cdi_spec.h"
