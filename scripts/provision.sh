#!/usr/bin/env bash
# Provision an Ubuntu machine (the Vagrant VM, or a plain Ubuntu host) for ethlab:
#   - Mininet and the usual network tools from Ubuntu's archive;
#   - BMv2 (simple_switch_grpc) and p4c from the p4lang project's published packages;
#   - ethlab itself (make setup: a venv in the checkout).
# Usage: sudo scripts/provision.sh [ETHLAB_DIR]
set -euo pipefail

ethlab_dir=${1:-$(cd "$(dirname "$0")/.." && pwd)}

if [ "$(id -u)" -ne 0 ]; then
  echo "provision.sh: run as root (sudo)" >&2
  exit 1
fi

# shellcheck disable=SC1091
. /etc/os-release
if [ "${ID:-}" != "ubuntu" ]; then
  echo "provision.sh: the p4lang packages are published for Ubuntu; this is ${ID:-unknown}." >&2
  echo "On Debian, ethlab runs on its embedded target p4exec only: run 'make demo' directly." >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq curl gnupg ca-certificates make git python3 python3-venv python3-pip \
  mininet iputils-ping iproute2 tcpdump ethtool

# The p4lang project publishes p4c and BMv2 builds for Ubuntu releases on the openSUSE build service.
repo="https://download.opensuse.org/repositories/home:/p4lang/xUbuntu_${VERSION_ID}"
keyring=/etc/apt/trusted.gpg.d/home_p4lang.gpg
if [ ! -s "$keyring" ]; then
  curl -fsSL "$repo/Release.key" | gpg --dearmor > "$keyring"
fi
echo "deb $repo/ /" > /etc/apt/sources.list.d/home-p4lang.list
apt-get update -qq
apt-get install -y -qq p4lang-bmv2 p4lang-p4c

# simple_switch_CLI (Thrift) sets BMv2 queues and registers, which its P4Runtime server lacks.
for tool in simple_switch_grpc simple_switch_CLI p4c-bm2-ss mnexec; do
  command -v "$tool" >/dev/null || { echo "provision.sh: $tool missing after install" >&2; exit 1; }
done

make -C "$ethlab_dir" setup
echo "ethlab provisioned: cd $ethlab_dir && sudo make demo TARGET=bmv2"
