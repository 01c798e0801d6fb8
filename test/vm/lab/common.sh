# shellcheck shell=bash
# Helpers shared by the lab's scripts (sourced, never run).

# Nothing from the caller's HOME or PATH (pyenv shims, ~/.bashrc tools):
# the distribution's tools only.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C

# log MESSAGE...: a timestamped line on stderr.
log() {
	printf '%s vmlab: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2
}

die() {
	log "error: $*"
	exit 1
}

# ensure_packages PKG...: install the Debian packages that are not installed
# yet (apt-get update once per process, only if something is missing).
ensure_packages() {
	local missing=() p
	for p in "$@"; do
		if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
			missing+=("$p")
		fi
	done
	if [ "${#missing[@]}" -eq 0 ]; then
		return 0
	fi
	[ "$(id -u)" -eq 0 ] || die "missing packages ${missing[*]} and not root to install them"
	log "installing ${missing[*]}"
	if [ -z "${VMLAB_APT_UPDATED:-}" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		VMLAB_APT_UPDATED=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# now: seconds since the epoch (for the timings prepare.sh prints).
now() {
	date +%s
}
