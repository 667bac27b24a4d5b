#!/bin/sh
# tests/need_check_test.sh: runs tools/need_check.sh (what `make test` runs when Check is missing)
# in fake systems made of stub commands, and checks what it decided to run. Run by `make test`.
#
# Each case is a folder of stubs that becomes the script's whole PATH: uname and id say which
# system and user this is; apt-get, sudo and brew append their arguments to a log and "install"
# by creating a marker file; pkg-config finds Check once the marker exists. Nothing real is
# installed and no real package manager is called.
set -u
script=$(cd "$(dirname "$0")/.." && pwd)/tools/need_check.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/need_check.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
n=0
rm=$(command -v rm)         # the real commands a stub uses (apt-get update removes a marker;
chmod=$(command -v chmod)   # apt-get install makes a curl stub)

stub() {   # stub DIR NAME BODY: an executable DIR/NAME running BODY under /bin/sh
  printf '#!/bin/sh\n%s\n' "$3" > "$1/$2" && chmod +x "$1/$2"
}

# make_system DIR OS UID TOOLS...: a fake system; TOOLS among apt-get sudo brew,
# plus apt-needs-update (apt-get install fails until apt-get update ran) and pc-broken (pkg-config
# never finds Check, even after an install).
make_system() {
  d=$1 os=$2 uid=$3; shift 3
  mkdir -p "$d/bin" && : > "$d/log"
  stub "$d/bin" uname "echo $os"
  stub "$d/bin" id "echo $uid"
  pc='[ -f "'"$d"'/installed" ]'
  for t in "$@"; do
    case $t in
      pc-broken) pc=false;;
      apt-needs-update) : > "$d/needs-update";;
    esac
  done
  stub "$d/bin" pkg-config "$pc"
  for t in "$@"; do
    case $t in
      apt-get) stub "$d/bin" apt-get '
echo "apt-get $* [DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-}]" >> "'"$d"'/log"
case "$1" in
  update) '"$rm"' -f "'"$d"'/needs-update";;
  install) [ -f "'"$d"'/needs-update" ] && exit 100; : > "'"$d"'/installed"
           printf "#!/bin/sh\\n" > "'"$d"'/bin/curl"; "'"$chmod"'" +x "'"$d"'/bin/curl";;
esac';;
      sudo) stub "$d/bin" sudo '
echo "sudo $*" >> "'"$d"'/log"
while [ $# -gt 0 ]; do case "$1" in *=*) export "$1"; shift;; *) break;; esac; done
"$@"';;
      brew) stub "$d/bin" brew '
echo "brew $*" >> "'"$d"'/log"
: > "'"$d"'/installed"';;
    esac
  done
}

# expect NAME STATUS LOG_WANTED OUTPUT_GREP: runs the script in the system last made in $d; wants
# its exit status, the stubs' log, and a line of its output matching OUTPUT_GREP (empty: no output).
expect() {
  n=$((n + 1))
  PATH="$d/bin" /bin/sh "$script" "${arg:-check}" > "$d/out" 2>&1
  st=$?
  got=$(cat "$d/log")
  if [ -z "$4" ]; then said=$([ ! -s "$d/out" ] && echo yes); else said=$(grep -q -e "$4" "$d/out" && echo yes); fi
  if [ "$st" != "$2" ] || [ "$got" != "$3" ] || [ -z "$said" ]; then
    fails=$((fails + 1))
    echo "need_check_test: $1: FAILED (exit $st, want $2)"
    echo "  commands run:"; sed 's/^/    /' "$d/log"
    echo "  wanted:"; printf '%s\n' "$3" | sed 's/^/    /'
    echo "  output (want a line matching '$4'):"; sed 's/^/    /' "$d/out"
  fi
}

i() { printf '%s' "$tmp/$1"; }

d=$(i found);       make_system "$d" Linux 1000 apt-get sudo; : > "$d/installed"
expect "Check already found: nothing run, nothing printed" 0 "" ""

d=$(i root);        make_system "$d" Linux 0 apt-get
expect "root without sudo: apt-get directly" 0 \
  "apt-get install -y -q check pkg-config [DEBIAN_FRONTEND=noninteractive]" \
  "installing Check and pkg-config: apt-get install -y check pkg-config"

d=$(i root-fresh);  make_system "$d" Linux 0 apt-get apt-needs-update
expect "root on a fresh system: install fails, update, install again" 0 \
  "apt-get install -y -q check pkg-config [DEBIAN_FRONTEND=noninteractive]
apt-get update -q [DEBIAN_FRONTEND=noninteractive]
apt-get install -y -q check pkg-config [DEBIAN_FRONTEND=noninteractive]" \
  "updating the package lists"

d=$(i user-sudo);   make_system "$d" Linux 1000 apt-get sudo
expect "user with sudo: sudo apt-get" 0 \
  "sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q check pkg-config
apt-get install -y -q check pkg-config [DEBIAN_FRONTEND=noninteractive]" \
  "sudo apt-get install -y check pkg-config"

d=$(i root-sudo);   make_system "$d" Linux 0 apt-get sudo
expect "root with sudo present: still apt-get directly" 0 \
  "apt-get install -y -q check pkg-config [DEBIAN_FRONTEND=noninteractive]" \
  "apt-get install -y check pkg-config"

d=$(i user-nosudo); make_system "$d" Linux 1000 apt-get
expect "user without sudo: prints the command, runs nothing" 1 "" \
  "su -c 'apt-get install -y check pkg-config'"

d=$(i mac-brew);    make_system "$d" Darwin 501 brew
expect "macOS with brew" 0 "brew install check pkg-config" \
  "installing Check and pkg-config: brew install check pkg-config"

d=$(i mac-nobrew);  make_system "$d" Darwin 501
expect "macOS without brew: prints the brew command" 1 "" "^  brew install check pkg-config$"

d=$(i nothing);     make_system "$d" Linux 1000
expect "no apt-get, no brew: prints what to install, exit 1" 1 "" \
  "apt-get install -y check pkg-config"

d=$(i broken-pc);   make_system "$d" Linux 0 apt-get pc-broken
expect "installed but pkg-config still misses it: exit 1" 1 \
  "apt-get install -y -q check pkg-config [DEBIAN_FRONTEND=noninteractive]" \
  "does not find check.pc"

# The downloader `make model` needs when ../shared/models is absent (tools/need_check.sh curl).
arg=curl
d=$(i curl-root);   make_system "$d" Linux 0 apt-get
expect "curl, root without sudo: apt-get installs curl and ca-certificates" 0 \
  "apt-get install -y -q curl ca-certificates [DEBIAN_FRONTEND=noninteractive]" \
  "make model: installing curl: apt-get install -y curl ca-certificates"

d=$(i curl-wget);   make_system "$d" Linux 1000 apt-get sudo; stub "$d/bin" wget ":"
expect "curl, wget already there: nothing run, nothing printed" 0 "" ""

d=$(i curl-user);   make_system "$d" Linux 1000 apt-get
expect "curl, user without sudo: prints the command" 1 "" \
  "su -c 'apt-get install -y curl ca-certificates'"
arg=check

if [ "$fails" -gt 0 ]; then
  echo "need_check_test: $fails of $n cases failed"
  exit 1
fi
echo "need_check_test: $n of $n cases passed (tools/need_check.sh in stub systems)"
