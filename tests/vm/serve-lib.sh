# SPDX-License-Identifier: GPL-2.0-only
#
# A guest that serves one kcsan-vm run after another (KCSAN_VM_SERVE=DIR), sourced by
# tests/vm/kcsan-vm: the host side.  The guest side is tests/vm/guest-serve.sh.
#
# Why: each guest suite of `make vm-tests` booted a guest of its own, and a boot and a
# power-off cost 6-15 s of TCG each (docs/test-kernel.md, twelfth pass); two suites in a
# row ask for the same guest (kernel, accelerator, CPUs, memory, cache share), so the
# second can run in the first one's guest once that guest is as the first found it.
#
# Three parts, all through files in DIR:
#   kcsan-vm --serve DIR     the supervisor (tests/vm/run-suites.sh starts one a queue): boots
#                            a guest when a run asks for one (DIR/boot: QEMU's command line),
#                            under the queue's guest lock, and waits for it, so that QEMU is
#                            its child (its CPU counts in the queue's) and the lock is held
#                            while the guest is up; ends at DIR/stop, or when its parent is
#                            gone, powering the guest off
#   serve_run                a run's side: hands its job (DIR/job) to the guest that is up
#                            with its configuration, or asks for a boot first, then waits for
#                            DIR/job.done, bounded by the run's --timeout
#   serve_off DIR            powers the guest off (DIR/off), so that a run of its own (another
#                            configuration, KCSAN_VM_REUSE=0) can take the lock
# DIR also holds: pid (QEMU's), key (the configuration it was booted with), lock-waited,
# console.log and qemu.log (the guest's, all jobs'), init-uptime and ready (the guest's
# uptime at /init and once it noted what a fresh guest looks like), fresh.txt (that),
# jobs (the last job's number).

# serve_pid DIR: QEMU's pid when DIR's guest is up; false when not.
serve_pid() {
	local pid

	pid=$(cat "$1/pid" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# serve_supervised DIR: DIR's supervisor is there.
serve_supervised() { kill -0 "$(cat "$1/supervisor" 2>/dev/null || echo none)" 2>/dev/null; }

# serve_wait_gone DIR SECONDS: waits for DIR's guest to end; false if it did not in time.
serve_wait_gone() {
	local i

	for ((i = 0; i < $2 * 5; i++)); do
		serve_pid "$1" > /dev/null || return 0
		sleep 0.2
	done
	return 1
}

# serve_kill DIR: ends DIR's guest at once (a job's timeout, a wedged guest).
serve_kill() {
	local pid

	pid=$(serve_pid "$1") || return 0
	kill -TERM "$pid" 2>/dev/null
	serve_wait_gone "$1" 5 || kill -KILL "$pid" 2>/dev/null
	serve_wait_gone "$1" 5
}

# serve_off DIR: DIR's guest powers off (when idle; a job in it is not ended).
serve_off() {
	local -

	set +e
	serve_pid "$1" > /dev/null || return 0
	touch "$1/off"
	serve_wait_gone "$1" 15 || serve_kill "$1"
}

# serve_supervise DIR: the supervisor (kcsan-vm --serve DIR), until DIR/stop or its parent's end.
serve_supervise() {
	local d=$1 parent=$PPID t qpid -
	local -a q

	set +e
	mkdir -p "$d" || die "--serve" "cannot create $d"
	d=$(cd "$d" && pwd)
	rm -f "$d"/{pid,boot,stop,off,ready,key,job,job.taken,job.done,jobs}
	echo $$ > "$d/supervisor"
	trap 'touch "$d/off"; serve_wait_gone "$d" 15 || serve_kill "$d"; exit 0' TERM INT
	while [ ! -e "$d/stop" ] && kill -0 "$parent" 2>/dev/null; do
		[ -e "$d/boot" ] || { sleep 0.2; continue; }
		mapfile -d '' -t q < "$d/boot"
		rm -f "$d/boot" "$d/off"
		t=$(date +%s)
		exec 9>"${KCSAN_VM_LOCK:-/tmp/kcsan-vm.lock}"
		flock 9
		echo $(( $(date +%s) - t )) > "$d/lock-waited"
		"${q[@]}" > "$d/qemu.log" 2>&1 < /dev/null &
		qpid=$!
		echo "$qpid" > "$d/pid"
		while kill -0 "$qpid" 2>/dev/null; do
			if [ -e "$d/stop" ] || ! kill -0 "$parent" 2>/dev/null; then
				touch "$d/off"
				serve_wait_gone "$d" 15 || serve_kill "$d"
			fi
			sleep 0.2
		done
		wait "$qpid"
		echo $? > "$d/qemu.rc"
		rm -f "$d/pid"
		exec 9>&-
	done
	serve_off "$d"
}

# serve_boot DIR KEY: asks DIR's supervisor for a guest of QEMU's command line in
# ${qemu[@]} and waits until it serves; sets qrc to 125 when it did not reach /init within
# boot_timeout_s, twice (as a run of its own), 2 when it ended before it served.
serve_boot() {
	local d=$1 attempt waited pid

	for attempt in 1 2; do
		rm -f "$d"/{init-uptime,ready,console.log,job,job.taken,job.done,qemu.rc}
		echo "$2" > "$d/key"
		touch "$d/cached"	# a guest's caches start empty
		printf '%s\0' "${qemu[@]}" > "$d/boot.tmp" && mv "$d/boot.tmp" "$d/boot"
		# The supervisor takes the request, then the lock (as long as other guests hold it).
		until pid=$(serve_pid "$d"); do
			[ ! -e "$d/qemu.rc" ] && serve_supervised "$d" || { qrc=2; return; }
			sleep 0.2
		done
		waited=$(cat "$d/lock-waited" 2>/dev/null || echo 0)
		[ "$waited" = 0 ] || info "waited $waited s for the lock"
		t0=$(date +%s.%N)
		for ((waited = 0; waited < boot_timeout_s * 5; waited++)); do
			[ ! -e "$d/init-uptime" ] && kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		# The job is handed now: the guest takes it once it has noted what it looks like.
		[ ! -e "$d/init-uptime" ] || { qrc=0; return; }
		serve_kill "$d"
		info "the guest did not reach /init within ${boot_timeout_s}s" \
			"(console: $(wc -c < "$d/console.log" 2>/dev/null || echo 0) bytes; boot $attempt of 2)"
		cp "$d/console.log" "$out/console-hung-$attempt.log" 2>/dev/null
	done
	qrc=125
}

# serve_changed DIR: the host may have replaced or rewritten a file that DIR's guest holds
# in its caches since it last dropped them (DIR/cached): its root is shared with cache=loose,
# which never asks again about a file it has read.  What a guest reads that a run changes:
# the repository's sources, scripts and builds (not build/vm, shared without a cache, nor
# the logs of make check's halves and queues) and the packages (dpkg's status).
# KCSAN_VM_SERVE_DROP=always or never decides for every job instead (to measure).
serve_changed() {
	local d=$1

	case ${KCSAN_VM_SERVE_DROP:-auto} in always) return 0 ;; never) return 1 ;; esac
	[ -e "$d/cached" ] && [ ! /var/lib/dpkg/status -nt "$d/cached" ] || return 0
	[ -n "$(find "$REPO" \( -path "$VMDIR" -o -path "$REPO/.git" \) -prune -o -newer "$d/cached" \
		-type f ! -path "$REPO/build/*.log" ! -path "$REPO/build/*.rc" ! -path "$REPO/build/*.times" \
		! -path "$REPO/build/*.done" ! -path "$REPO/build/vm-queue.*" -print -quit 2>/dev/null)" ]
}

# serve_job DIR ID: hands the job in $out to DIR's guest and waits for its end: sets qrc
# (0: it ended, 124: its time ran out and the guest was ended, 3: the guest did not take
# it) and served (the guest's verdict: ok, or stop when it powers off).
serve_job() {
	local d=$1 id=$2 t=$SECONDS pid drop did taken=

	pid=$(serve_pid "$d") || { qrc=3; return; }
	rm -f "$d/job.taken" "$d/job.done"
	drop=
	if serve_changed "$d"; then drop=drop; touch "$d/cached"; fi
	echo "$id $out $drop" > "$d/job.tmp" && mv "$d/job.tmp" "$d/job"
	served=
	until read -r did _ served 2>/dev/null < "$d/job.done" && [ "$did" = "$id" ] && [ -n "$served" ]; do
		read -r did 2>/dev/null < "$d/job.taken" && [ "$did" = "$id" ] && taken=1
		if ! kill -0 "$pid" 2>/dev/null; then
			[ -n "$taken" ] && qrc=0 || qrc=3
			return
		fi
		if [ -z "$taken" ] && ((SECONDS - t > 30)); then
			serve_kill "$d"; qrc=3; return
		fi
		if ((SECONDS - t > timeout_s)); then
			serve_kill "$d"; qrc=124; return
		fi
		sleep 0.2
	done
	qrc=0
	if [ "$served" != ok ]; then
		info "the guest is not used again: this job left it changed:" \
			"$(grep '^FAIL' "$out/reuse.txt" 2>/dev/null | tr '\n' ' ')"
		serve_wait_gone "$d" 20 || serve_kill "$d"
	fi
}

# serve_run DIR KEY: the run in $out, in DIR's guest of configuration KEY (booted first when
# none is up, or one of another configuration is); sets qrc, elapsed and serve_note as a run
# of its own sets qrc and elapsed, and leaves console.log, qemu.log and init-uptime in $out.
serve_run() {
	local d=$1 key=$2 c0=0 id booted=0 try

	exec 6>"$d/client.lock"
	flock 6
	trap 'serve_kill "$d"; exit 2' INT TERM
	for try in 1 2; do
		t0=$(date +%s.%N)
		if ! serve_pid "$d" > /dev/null || [ "$(cat "$d/key" 2>/dev/null)" != "$key" ] ||
		   [ ! -e "$d/ready" ]; then
			serve_off "$d"
			info "booting $kver ($(basename "$boot_image"), $accel, smp $smp, a guest that serves, in $d)"
			serve_boot "$d" "$key"
			booted=1 c0=0
			[ "$qrc" = 0 ] || break
		fi
		[ $booted = 1 ] || c0=$(wc -c < "$d/console.log" 2>/dev/null || echo 0)
		id=$(( $(cat "$d/jobs" 2>/dev/null || echo 0) + 1 ))
		echo "$id" > "$d/jobs"
		serve_job "$d" "$id"
		[ "$qrc" = 3 ] && [ $try = 1 ] && { info "the guest did not take the job: booting another"; continue; }
		break
	done
	trap - INT TERM
	exec 6>&-
	[ "$qrc" != 3 ] || qrc=2
	tail -c +$((c0 + 1)) "$d/console.log" > "$out/console.log" 2>/dev/null
	cp "$d/qemu.log" "$out/qemu.log" 2>/dev/null
	cp "$d/init-uptime" "$out/init-uptime" 2>/dev/null
	elapsed=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	serve_note="; job ${id:-?} of the guest in $d, $([ $booted = 1 ] && echo "booted for it" || echo "already up")"
}
