#!/bin/sh
# tools/need_check.sh: installs what `make test` needs beyond a C compiler: Check (the unit-test
# framework) and pkg-config (which tells the Makefile Check's flags). The Makefile runs it before
# building the tests; it returns at once, silently, when `pkg-config --exists check` succeeds.
#
#   Debian/Ubuntu  apt-get install -y check pkg-config, as root directly or through sudo
#                  (apt-get update and a second try if the first install fails, as it does on a
#                  fresh system whose package lists are empty)
#   macOS          brew install check pkg-config
#   otherwise      prints the one command to run (what it would have run, or the nearest it knows:
#                  through su when there is no sudo, brew once Homebrew is installed) and exits 1
#
# Takes no arguments. Every command it runs is a fixed list of words (no eval, no sh -c), so
# nothing from the environment or the file system is ever read as shell code. Exits 0 once
# pkg-config finds Check, 1 otherwise. tests/need_check_test.sh runs it against stub commands.
set -u

have() { command -v "$1" > /dev/null 2>&1; }
found() { have pkg-config && pkg-config --exists check 2> /dev/null; }
cant() {   # $1: the command to run; $2: why this script did not run it
  echo "make test needs Check and pkg-config, which are not installed ($2). Run:" >&2
  echo "  $1" >&2
  exit 1
}

found && exit 0

pkgs="check pkg-config"
if [ "$(uname -s 2> /dev/null)" = Darwin ]; then
  have brew || cant "brew install $pkgs" "Homebrew not found: https://brew.sh"
  echo "make test: installing Check and pkg-config: brew install $pkgs"
  brew install check pkg-config || cant "brew install $pkgs" "brew failed"
elif have apt-get; then
  if [ "$(id -u 2> /dev/null)" = 0 ]; then
    shown="apt-get install -y $pkgs"
    as_root() { DEBIAN_FRONTEND=noninteractive "$@"; }
  elif have sudo; then
    shown="sudo apt-get install -y $pkgs"
    as_root() { sudo DEBIAN_FRONTEND=noninteractive "$@"; }
  else
    cant "su -c 'apt-get install -y $pkgs'" "not root, and no sudo"
  fi
  echo "make test: installing Check and pkg-config: $shown"
  if ! as_root apt-get install -y -q check pkg-config; then
    echo "make test: the install failed; updating the package lists and trying once more"
    as_root apt-get update -q && as_root apt-get install -y -q check pkg-config ||
      cant "$shown" "apt-get failed"
  fi
else
  cant "your package manager's install of Check and pkg-config (on Debian: apt-get install -y $pkgs)" \
       "no apt-get (Debian/Ubuntu) or brew (macOS) here"
fi

found && exit 0
cant "pkg-config --exists check && echo found" \
     "installed, but pkg-config does not find check.pc: is PKG_CONFIG_PATH set?"
