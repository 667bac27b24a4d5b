#!/bin/sh
# tools/need_check.sh [check|curl]: installs what the quick start needs beyond a C compiler.
#   check (the default): what `make test` needs, Check (the unit-test framework) and pkg-config
#         (which tells the Makefile Check's flags). The Makefile runs it before building the
#         tests; it returns at once, silently, when `pkg-config --exists check` succeeds.
#   curl: a downloader for `make model` (curl, and ca-certificates for https), run only when
#         neither curl nor wget is installed and ../shared/models does not hold the model.
#
#   Debian/Ubuntu  apt-get install -y check pkg-config, as root directly or through sudo
#                  (apt-get update and a second try if the first install fails, as it does on a
#                  fresh system whose package lists are empty)
#   macOS          brew install check pkg-config
#   otherwise      prints the one command to run (what it would have run, or the nearest it knows:
#                  through su when there is no sudo, brew once Homebrew is installed) and exits 1
#
# Every command it runs is a fixed list of words (no eval, no sh -c), so
# nothing from the environment or the file system is ever read as shell code. Exits 0 once
# pkg-config finds Check, 1 otherwise. tests/need_check_test.sh runs it against stub commands.
set -u

have() { command -v "$1" > /dev/null 2>&1; }
case "${1:-check}" in
  check) who="make test"; what="Check and pkg-config"; pkgs="check pkg-config"
         found() { have pkg-config && pkg-config --exists check 2> /dev/null; };;
  curl)  who="make model"; what="curl"; pkgs="curl ca-certificates"
         found() { have curl || have wget; };;
  *)     echo "need_check.sh: unknown argument '$1': pass check or curl" >&2; exit 2;;
esac
cant() {   # $1: the command to run; $2: why this script did not run it
  echo "$who needs $what, not installed here ($2). Run:" >&2
  echo "  $1" >&2
  exit 1
}

found && exit 0

if [ "$(uname -s 2> /dev/null)" = Darwin ]; then
  have brew || cant "brew install $pkgs" "Homebrew not found: https://brew.sh"
  echo "$who: installing $what: brew install $pkgs"
  brew install $pkgs || cant "brew install $pkgs" "brew failed"
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
  echo "$who: installing $what: $shown"
  if ! as_root apt-get install -y -q $pkgs; then
    echo "$who: the install failed; updating the package lists and trying once more"
    as_root apt-get update -q && as_root apt-get install -y -q $pkgs ||
      cant "$shown" "apt-get failed"
  fi
else
  cant "your package manager's install of $what (on Debian: apt-get install -y $pkgs)" \
       "no apt-get (Debian/Ubuntu) or brew (macOS) here"
fi

found && exit 0
[ "$pkgs" = "curl ca-certificates" ] && cant "apt-get install -y $pkgs" "installed, but not found on PATH"
cant "pkg-config --exists check && echo found" \
     "installed, but pkg-config does not find check.pc: is PKG_CONFIG_PATH set?"
