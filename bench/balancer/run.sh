#!/usr/bin/env bash
# The NUMA balancer's benchmark and its peer comparison, in the 2-node NUMA
# test guest (test/numavm):
#   - four memory-bandwidth groups (two threads writing 1 KiB blocks each, as
#     `sysbench memory` does) shared over every CPU vs placed by the agent's
#     NUMA balancer: events/s and the expected local-access ratio;
#   - `locus advise` vs numad's `numad -w CPUS:MB` in the same machine states.
# numad comes from Debian's package (installed with apt, as root) and is
# copied with its libraries into the guest package's testdata/peer, which is
# emptied again on exit. Results: the BALANCER-BENCH: and ADVISE-PEER: lines,
# also written to $OUT/results.txt (default .cache/balancer-bench).
set -euo pipefail
shopt -s inherit_errexit

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"
out="${OUT:-$repo/.cache/balancer-bench}"
peer="$repo/pkg/balancer/guest/testdata/peer"
export NUMAVM_CACHE="${NUMAVM_CACHE:-$repo/.cache/numavm-balancer-bench}"
mkdir -p "$out" "$NUMAVM_CACHE/kernel"

if ! command -v numad >/dev/null; then
	[ "$(id -u)" = 0 ] || { echo "bench/balancer: numad is missing and only root can install it" >&2; exit 1; }
	apt-get -o DPkg::Lock::Timeout=300 update -qq
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends numad
fi
echo "bench/balancer: peer $(dpkg-query -W -f '${Package} ${Version}' numad)" | tee "$out/peer.txt"

cleanup() { find "$peer" -mindepth 1 ! -name .gitignore -delete; }
trap cleanup EXIT
numad_bin="$(command -v numad)"
cp -L "$numad_bin" "$peer/numad"
for lib in $(ldd "$numad_bin" | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p'); do
	cp -L "$lib" "$peer/"
done
loader="$(ldd "$numad_bin" | sed -n 's/^[[:space:]]*\(\/[^ ]*ld-linux[^ ]*\) (.*/\1/p')"
[ -n "$loader" ] || { echo "bench/balancer: no dynamic loader in ldd $numad_bin" >&2; exit 1; }
cp -L "$loader" "$peer/ld-linux-x86-64.so.2"

# A kernel cached by another numavm run saves a download.
if ! ls "$NUMAVM_CACHE"/kernel/vmlinuz-* >/dev/null 2>&1; then
	for k in "$repo"/.cache/numavm*/kernel/vmlinuz-*; do
		[ -e "$k" ] && cp "$k" "$NUMAVM_CACHE/kernel/" && break
	done
fi

bash test/numavm/run.sh --pkgs ./pkg/balancer/guest --run 'Bench|Advise' --append "numavm.balancer_bench=1" \
	--test-timeout 25m --timeout 1800 --quiet 2>&1 | tee "$out/run.log"
grep -a '^BALANCER-BENCH:\|^ADVISE-PEER:\|^ADVISE-TABLE:' "$NUMAVM_CACHE/console.log" | tee "$out/results.txt"
{
	echo "host: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sort -u | tr '\n' ' ')"
	echo "load after: $(cat /proc/loadavg)"
} | tee -a "$out/results.txt"
