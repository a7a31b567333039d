#!/usr/bin/env bash
# Provision a Debian 12 or Ubuntu machine (the Vagrant VM, or a plain host) for ethlab:
#   - Mininet and the usual network tools from the distribution's archive;
#   - ethlab itself (make setup: a venv in the checkout, with the `thrift` package BMv2's side channel uses);
#   - optionally (ETHLAB_P4LANG_PACKAGES=1, Ubuntu only) the p4lang project's published BMv2 and p4c packages.
# ethlab never builds BMv2 or p4c. The BMv2 target and its tests need `simple_switch_grpc` (BMv2 with PI's
# P4Runtime server and Thrift) and `p4c-bm2-ss` on PATH; ethlab's BMv2 tests were last run with BMv2 1.15.0
# and p4c 1.2.4.17. Without them everything runs on the embedded target and the BMv2 tests skip.
# Usage: sudo [ETHLAB_P4LANG_PACKAGES=1] scripts/provision.sh [ETHLAB_DIR]
set -euo pipefail

ethlab_dir=${1:-$(cd "$(dirname "$0")/.." && pwd)}

if [ "$(id -u)" -ne 0 ]; then
  echo "provision.sh: run as root (sudo)" >&2
  exit 1
fi

# shellcheck disable=SC1091
. /etc/os-release
case "${ID:-}" in
  debian|ubuntu) ;;
  *) echo "provision.sh: Debian or Ubuntu expected, this is ${ID:-unknown}" >&2; exit 1;;
esac

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq curl gnupg ca-certificates make git python3 python3-venv python3-pip \
  mininet iputils-ping iproute2 tcpdump ethtool nftables

if [ "${ETHLAB_P4LANG_PACKAGES:-0}" = 1 ]; then
  if [ "${ID}" != ubuntu ]; then
    echo "provision.sh: the p4lang packages are published for Ubuntu only; skipping them on ${ID}" >&2
  else
    # The p4lang project publishes p4c and BMv2 builds for Ubuntu releases on the openSUSE build service;
    # their versions are the project's, not necessarily the ones ethlab's BMv2 tests ran with.
    repo="https://download.opensuse.org/repositories/home:/p4lang/xUbuntu_${VERSION_ID}"
    keyring=/etc/apt/trusted.gpg.d/home_p4lang.gpg
    if [ ! -s "$keyring" ]; then
      curl -fsSL "$repo/Release.key" | gpg --dearmor > "$keyring"
    fi
    echo "deb $repo/ /" > /etc/apt/sources.list.d/home-p4lang.list
    apt-get update -qq
    apt-get install -y -qq p4lang-bmv2 p4lang-p4c || echo "provision.sh: p4lang packages not installed" >&2
  fi
fi

command -v mnexec >/dev/null || { echo "provision.sh: mnexec missing after install" >&2; exit 1; }

make -C "$ethlab_dir" setup
missing=""
for tool in simple_switch_grpc p4c-bm2-ss; do
  command -v "$tool" >/dev/null || missing="$missing $tool"
done
if [ -n "$missing" ]; then
  echo "ethlab provisioned for the embedded target (not on PATH:$missing, so --target bmv2 is" \
       "unavailable and the BMv2 tests skip): cd $ethlab_dir && sudo make demo"
else
  echo "ethlab provisioned for both targets: cd $ethlab_dir && sudo make demo TARGET=bmv2"
fi
"$ethlab_dir/.venv/bin/ethlab" doctor || true
