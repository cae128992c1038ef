#!/usr/bin/env bash
# Installs every Debian package stormsweep needs to build, test and plot.
# Safe to run again: apt-get skips what is already there.
set -euo pipefail
PACKAGES=(build-essential cmake pkg-config
  libhdf5-dev hdf5-tools libxxhash-dev libinih-dev libcmocka-dev zlib1g-dev libxml2-dev
  libjansson-dev libyaml-dev
  gnuplot-nox python3 python3-h5py python3-numpy
  python3-xarray python3-pandas python3-matplotlib python3-netcdf4 python3-h5netcdf netcdf-bin
  openmpi-bin libopenmpi-dev
  clang libclang-rt-14-dev libomp-dev valgrind)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
