# Builds the images a node test needs with hack/build-image.sh (no Docker) and names them. Sourced, never run.
#
# build_images DIR: writes the archives to DIR and sets DRIVER_IMAGE (the driver's test image: umockdev and the
# recordings), WORKLOAD_IMAGE (busybox), SANDBOX_IMAGE (pause) and IMAGE_ARCHIVES (their archive files).
# The driver binary is $LIKEN_DRA (default build/liken-dra).
build_images() {
  local out=$1 repo
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  "$repo/hack/build-image.sh" --out "$out" --binary "${LIKEN_DRA:-$repo/build/liken-dra}" test pause busybox >&2
  # shellcheck disable=SC1091
  source "$out/images.env"
  DRIVER_IMAGE=$LIKEN_TEST_IMAGE
  WORKLOAD_IMAGE=$LIKEN_BUSYBOX_IMAGE
  SANDBOX_IMAGE=$LIKEN_PAUSE_IMAGE
  IMAGE_ARCHIVES=("$LIKEN_TEST_IMAGE_ARCHIVE" "$LIKEN_PAUSE_IMAGE_ARCHIVE" "$LIKEN_BUSYBOX_IMAGE_ARCHIVE")
}
