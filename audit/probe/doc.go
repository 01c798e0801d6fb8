// Package probe settles kernel-synack-wscale by observation: it runs the
// SYN-cookie window-scale test on a host (tcp_syncookies=2, as the
// talk reproduced the bug; the mechanism is Linux commit 909172a's), agentlessly.
//
// Delivery: one SSH session runs a POSIX sh wrapper (probe.sh) on stdin,
// which starts the host's own python3 (RHEL 8: /usr/libexec/platform-python)
// with the probe (probe.py) as its -c argument. Nothing is written to disk,
// so nothing can stay behind; the network namespace is anonymous
// (`unshare -n` execs python in it, with fd 3 held on the host namespace's
// tcp_syncookies; without unshare(1) python calls unshare(CLONE_NEWNET)
// itself, through os.unshare or ctypes — Debian's python3-minimal has no
// ctypes; never bind-mounted, so never in `ip netns list`) and dies with
// the process. Each case prints its handshake (the window-scale pair,
// which decides) before its transfer, and each transfer has its own share
// of the budget, so a probe cut short keeps every pair it measured. python
// stops itself after its budget (SIGALRM and socket timeouts) and
// timeout(1) kills it a second later. A prebuilt static probe binary was not chosen: a `go
// install` user has no cross-compiler, embedding prebuilt amd64 and arm64
// binaries would add megabytes of opaque bytes to the source tree and a
// temp file (to be removed even on Ctrl-C) to every host, while every
// supported broker OS ships python3 or platform-python. A host without
// either gets the probe state no-python and the verdict from the next
// source.
//
// Safety: tcp_syncookies is written only inside the new namespace, and
// only on kernels where it is per network namespace (SyncookiesPerNetns,
// decided from the release before anything is sent). The probe also keeps
// a descriptor on the host namespace's tcp_syncookies, re-reads it after
// every write and every case, and restores it and aborts if it ever moved.
//
// Run returns a facts.Probe; rules turn it into the verdict (probe >
// changelog > version table > unknown; a probe that ran and settled
// nothing is never overruled into a pass).
package probe
