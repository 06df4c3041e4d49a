#!/usr/bin/env bash
# The fresh-machine check: builds a minimal Debian 12 root with debootstrap,
# copies this checkout into it and runs the README's two set-up commands there
# (chroot), then installs the .deb the build makes into a second clean root
# and runs the installed programs. Prints the time of each step and stops at
# the first error. Not part of the test suite: it takes many minutes (a whole
# build in a root with nothing installed). Needs root and Debian's archive.
#
#   sudo bash scripts/check-fresh-machine.sh [--with-cuda] [--ccache DIR] [--work DIR] [--keep]
#
#   --with-cuda   after the checks without a CUDA toolkit, make this machine's
#                 toolkit (/usr/local/cuda) visible in the root and run the
#                 test command again (the build then finds NVRTC)
#   --ccache DIR  share a compiler cache (e.g. ~/.cache/ccache) with the root:
#                 faster, and it changes no package or file the build sees
#   --work DIR    where the roots live (default /var/tmp/tessera-fresh); the
#                 debootstrapped base is kept there and copied for each run
#   --keep        leave the roots in place afterwards (for a look inside)
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD

with_cuda=0
ccache_dir=""
work=/var/tmp/tessera-fresh
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --with-cuda) with_cuda=1 ;;
    --ccache) ccache_dir=$(realpath "$2"); shift ;;
    --work) work=$2; shift ;;
    --keep) keep=1 ;;
    *) echo "usage: $0 [--with-cuda] [--ccache DIR] [--work DIR] [--keep]" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" -eq 0 ] || { echo "check-fresh-machine: needs root (debootstrap, chroot)" >&2; exit 2; }

step_start=0
step() { step_start=$(date +%s); echo; echo "== $*"; }
done_step() { echo "== ok ($(( $(date +%s) - step_start )) s)"; }

# The Debian mirror this machine's apt uses (sources.list or deb822 .sources).
mirror=$(grep -hsE '^(deb |URIs:)' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
           /etc/apt/sources.list.d/*.sources 2>/dev/null |
         grep -v security | grep -oE 'https?://[^ ]+' | head -n1 || true)
[ -n "$mirror" ] || { echo "check-fresh-machine: no Debian mirror in /etc/apt" >&2; exit 2; }

mounted=()
mount_into() {  # mount_into ROOT: what a chroot needs to build and run tests
  local r=$1
  mount -t proc proc "$r/proc"; mounted+=("$r/proc")
  mount --rbind /sys "$r/sys"; mount --make-rslave "$r/sys"; mounted+=("$r/sys")
  mount --rbind /dev "$r/dev"; mount --make-rslave "$r/dev"; mounted+=("$r/dev")
  cp -L /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null || true
}
cleanup() {
  local i
  for (( i=${#mounted[@]}-1; i>=0; i-- )); do umount -R "${mounted[$i]}" 2>/dev/null || umount -l "${mounted[$i]}" 2>/dev/null || true; done
  if [ "$keep" -eq 0 ]; then rm -rf "$work/root" "$work/pkgroot"; fi
}
trap cleanup EXIT
in_root() {  # in_root ROOT COMMAND: a login-like shell in the root, no host environment
  local r=$1; shift
  chroot "$r" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 TERM=dumb /bin/bash -c "$*"
}

mkdir -p "$work"
total_start=$(date +%s)

# 1. A minimal Debian 12 with git (what a new user has), kept for later runs.
if [ ! -x "$work/base/bin/bash" ]; then
  command -v debootstrap >/dev/null || { apt-get update -qq; apt-get install -y -qq debootstrap; }
  step "debootstrap bookworm (minbase + git) from $mirror"
  rm -rf "$work/base.partial"
  debootstrap --variant=minbase --include=git,ca-certificates bookworm "$work/base.partial" "$mirror" \
    > "$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log"; exit 1; }
  mv "$work/base.partial" "$work/base"
  done_step
fi

step "fresh root: copy the base and this checkout (tracked and untracked, not ignored files)"
rm -rf "$work/root"
cp -a "$work/base" "$work/root"
mkdir -p "$work/root$src"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -C "$work/root$src" -xf -
mount_into "$work/root"
if [ -n "$ccache_dir" ]; then
  mkdir -p "$work/root/root/.cache/ccache"
  mount --bind "$ccache_dir" "$work/root/root/.cache/ccache"; mounted+=("$work/root/root/.cache/ccache")
fi
[ ! -e "$work/root/usr/local/cuda" ] || { echo "the base root has a CUDA toolkit" >&2; exit 1; }
done_step

# 2. The README's two commands, without a CUDA toolkit.
step "README command 1 (no CUDA toolkit): bash scripts/studio.sh"
in_root "$work/root" "cd $src && bash scripts/studio.sh"
test -s "$work/root$src/build/studio.png"
done_step

step "README command 2 (no CUDA toolkit): bash scripts/test.sh"
in_root "$work/root" "cd $src && bash scripts/test.sh" 2>&1 | tee "$work/test-no-cuda.log" | tail -n 15
[ "${PIPESTATUS[0]}" -eq 0 ]
done_step

step "the product links no CUDA, OpenBLAS or oneDNN library"
for b in tessera tessera-studio tessera-gpu-worker; do
  if ldd "$work/root$src/build/bin/$b" | grep -E 'lib(nvrtc|cuda|cublas|openblas|dnnl|onnxruntime)[.-]'; then
    echo "build/bin/$b links a library it must not" >&2; exit 1
  fi
done
done_step

step "the .deb (cpack -G DEB, Depends from dpkg-shlibdeps)"
in_root "$work/root" "cd $src/build && cpack -G DEB -B $src/build/deb > cpack.log 2>&1 || { tail -20 cpack.log; exit 1; }"
deb=$(ls "$work/root$src"/build/deb/tessera_*_amd64.deb)
dpkg-deb -f "$deb" Depends
done_step

# 3. The package alone on a second clean root: dpkg -i, apt-get -f install.
step "install the .deb on a clean root and run the installed programs"
rm -rf "$work/pkgroot"
cp -a "$work/base" "$work/pkgroot"
cp "$deb" "$work/pkgroot/tmp/tessera.deb"
mount_into "$work/pkgroot"
in_root "$work/pkgroot" '
  set -e
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  dpkg -i /tmp/tessera.deb > /tmp/dpkg.log 2>&1 || apt-get -f install -y -qq --no-install-recommends > /tmp/apt.log
  dpkg -s tessera | grep -q "Status: install ok installed"
  tessera --version
  tessera run /usr/share/tessera/examples/small_cnn.onnx --check
  QT_QPA_PLATFORM=offscreen tessera-studio /usr/share/tessera/examples/small_cnn.onnx --screenshot /tmp/studio.png
  test -s /tmp/studio.png
  # Exporting a package links its lib.so with cc (Recommends: gcc): without
  # one, a clear error; with it, a package that runs.
  if tessera compile /usr/share/tessera/examples/small_cnn.onnx -o /tmp/m.tar 2> /tmp/compile.err; then
    echo "compile worked without a C compiler?"; exit 1
  fi
  grep -q "needs a C compiler" /tmp/compile.err
  apt-get install -y -qq --no-install-recommends gcc libc6-dev > /tmp/gcc.log
  tessera compile /usr/share/tessera/examples/small_cnn.onnx -o /tmp/m.tar
  tessera run /tmp/m.tar
  # Every library the installed programs load comes from a Debian package.
  for b in /usr/bin/tessera /usr/bin/tessera-studio /usr/bin/tessera-gpu-worker; do
    ldd "$b" | grep -q "not found" && { ldd "$b" | grep "not found"; exit 1; }
    for lib in $(ldd "$b" | grep -oE "/[^ ]+\.so[^ ]*"); do
      dpkg -S "$(readlink -f "$lib")" >/dev/null 2>&1 || dpkg -S "$lib" >/dev/null 2>&1 ||
        { echo "$b: $lib is in no Debian package"; exit 1; }
    done
    if ldd "$b" | grep -E "lib(nvrtc|cuda|openblas|dnnl)[.-]"; then echo "$b links a comparator or NVRTC"; exit 1; fi
  done
  echo "installed tessera, tessera-studio and tessera-gpu-worker: every library from a Debian package"'
done_step

# 4. A configure that fails half way (a package it needs went missing), then
# the README's test command: it installs the package, configures again and passes.
step "a failed configure, then README command 2 recovers"
in_root "$work/root" "cd $src && DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq nlohmann-json3-dev > /dev/null &&
  rm -f build/build.ninja &&
  if cmake --preset default > build/failed-configure.log 2>&1; then echo 'the configure did not fail' >&2; exit 1; fi &&
  test -f build/CMakeCache.txt && echo 'configure failed as intended (nlohmann_json missing), cache left behind'"
in_root "$work/root" "cd $src && bash scripts/test.sh" 2>&1 | tee "$work/test-recovered.log" | tail -n 5
done_step

# 5. Again with this machine's CUDA toolkit visible: the build finds NVRTC
# and the tests compile CUDA C to PTX.
if [ "$with_cuda" -eq 1 ]; then
  cuda=$(readlink -f /usr/local/cuda)
  [ -d "$cuda" ] || { echo "--with-cuda: no /usr/local/cuda on this machine" >&2; exit 2; }
  step "README command 2 with the CUDA toolkit ($cuda) visible"
  mkdir -p "$work/root/usr/local/cuda"
  mount --bind -o ro "$cuda" "$work/root/usr/local/cuda"; mounted+=("$work/root/usr/local/cuda")
  # The toolkit appeared after the first configure: configure again.
  rm -f "$work/root$src/build/build.ninja"
  in_root "$work/root" "cd $src && bash scripts/test.sh" 2>&1 | tee "$work/test-cuda.log" | tail -n 15
  [ "${PIPESTATUS[0]}" -eq 0 ]
  grep -q "NVRTC found" "$work/test-cuda.log" || { echo "the build did not find NVRTC" >&2; exit 1; }
  done_step
fi

echo
echo "check-fresh-machine: all steps passed in $(( $(date +%s) - total_start )) s"
