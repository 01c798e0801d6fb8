# kaudit SYN-cookie window-scale probe (Linux commit 909172a).
#
# Runs as root, started by kaudit's probe wrapper (probe.sh) with the
# host's own python3 (or RHEL 8's platform-python). It never writes a file
# and never changes a value of the host's network namespace:
#   1. holds a descriptor on the HOST namespace's tcp_syncookies (kept open
#      to re-check it),
#   2. lives in a fresh, anonymous network namespace that disappears when
#      the process exits: made by the wrapper (unshare -n, which needs no
#      python module; the descriptor is then fd 3, opened by the wrapper
#      before) or, without unshare(1), by python itself (os.unshare on
#      3.12+, else ctypes),
#   3. brings up lo and sets tcp_syncookies=2 (cookies for every SYN),
#      tcp_timestamps=1 and tcp_window_scaling=1 INSIDE that namespace,
#   4. per SO_RCVBUF case: a listener with SO_RCVBUF set before listen() (as
#      Kafka does), a loopback client, raw TCP_INFO on both ends, printed AT
#      ONCE as a handshake= line (the window-scale pair decides the verdict);
#      then a payload sent client -> listener within the case's own share of
#      the budget, printed as a transfer= line (bytes that flowed, ms),
#   5. after every write and every case re-reads the host's value through
#      the descriptor of step 1; a change aborts and restores it.
# Output: key=value lines, each flushed as soon as it is known, so a probe
# cut short keeps every line it printed. Nothing else on stdout.
# Arguments: BUDGET_MS PAYLOAD_BYTES NETNS RCVBUF... where NETNS is "self"
# or the host namespace (net:[N]) the wrapper left for unshare -n, and
# RCVBUF "max" = rmem_max. Modules: only those of Debian's python3-minimal
# (ctypes, absent there, is imported only when it is needed).
import fcntl
import os
import signal
import socket
import struct
import sys
import threading
import time

CLONE_NEWNET = 0x40000000
TCP_INFO = 11
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
SYSCTL = "/proc/sys/net/ipv4/"
TRANSFER_CAP = 2.0  # seconds: no transfer waits longer, whatever the budget
RESERVE = 0.15  # seconds kept at the end for the closing lines
PHASE = ["starting"]  # what the probe is doing, for a SIGALRM report
DONE = [False]


def out(key, value):
    sys.stdout.write("%s=%s\n" % (key, value))
    sys.stdout.flush()


def stop(state, reason=None):
    if not DONE[0]:
        DONE[0] = True
        signal.alarm(0)
        out("state", state)
        if reason is not None:
            out("reason", reason.replace("\n", " "))
    sys.exit(0)


def on_alarm(signum, frame):
    stop("timeout", "SIGALRM: the probe's hard limit passed while %s" % PHASE[0])


def read_ns_value(fd):
    return os.pread(fd, 32, 0).decode("ascii", "replace").strip()


def netstat_cookies():
    """SyncookiesSent and SyncookiesRecv of the current namespace."""
    with open("/proc/net/netstat") as f:
        lines = f.read().splitlines()
    for i in range(0, len(lines) - 1, 2):
        head, vals = lines[i].split(), lines[i + 1].split()
        if head and head[0] == "TcpExt:":
            d = dict(zip(head[1:], vals[1:]))
            return int(d.get("SyncookiesSent", -1)), int(d.get("SyncookiesRecv", -1))
    return -1, -1


class Guard(object):
    """Re-reads the host namespace's tcp_syncookies; restores it if it moved."""

    def __init__(self, fd):
        self.fd = fd
        self.before = read_ns_value(self.fd)

    def check(self, when):
        now = read_ns_value(self.fd)
        if now != self.before:
            os.pwrite(self.fd, (self.before + "\n").encode(), 0)
            out("host_syncookies_changed", now)
            stop("host-changed", "the host namespace's tcp_syncookies changed from %s to %s %s: "
                 "it is not per network namespace on this kernel; restored to %s, probe aborted"
                 % (self.before, now, when, read_ns_value(self.fd)))


def unshare_self():
    """unshare(CLONE_NEWNET) without unshare(1): os.unshare, else ctypes."""
    if hasattr(os, "unshare"):
        try:
            os.unshare(CLONE_NEWNET)
        except OSError as e:
            stop("unshare-failed", "os.unshare(CLONE_NEWNET): %s" % e.strerror)
        return "os.unshare"
    try:
        import ctypes
    except ImportError:
        stop("unsupported", "no unshare(1) on the host and python %d.%d has neither os.unshare nor ctypes"
             % (sys.version_info[0], sys.version_info[1]))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        stop("unshare-failed", "unshare(CLONE_NEWNET): %s" % os.strerror(ctypes.get_errno()))
    return "ctypes"


def enter_netns(mode):
    """Returns the guard, in the probe's own namespace."""
    if mode == "self":
        before = os.readlink("/proc/self/ns/net")
        guard = Guard(os.open(SYSCTL + "tcp_syncookies", os.O_RDWR))
        out("host_syncookies_before", guard.before)
        how = unshare_self()
    else:  # the wrapper ran us under unshare -n, fd 3 opened before it
        before = mode
        guard = Guard(3)
        out("host_syncookies_before", guard.before)
        how = "unshare(1)"
    after = os.readlink("/proc/self/ns/net")
    out("unshare", how)
    out("netns_host", before)
    out("netns_probe", after)
    if after == before:
        stop("unshare-failed", "still in the host network namespace after unshare")
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        ifr = fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sh22x", b"lo", 0))
        flags = struct.unpack("16sh22x", ifr)[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sh22x", b"lo", flags | IFF_UP))
    finally:
        s.close()
    for name, value in (("tcp_syncookies", "2"), ("tcp_timestamps", "1"), ("tcp_window_scaling", "1")):
        path = SYSCTL + name
        if not os.path.exists(path):
            stop("no-sysctl", "%s does not exist inside the new network namespace" % path)
        with open(path, "w") as f:
            f.write(value + "\n")
        guard.check("after writing %s=%s inside the new namespace" % (name, value))
        with open(path) as f:
            got = f.read().strip()
        if got != value:
            stop("error", "%s reads %s after writing %s inside the new namespace" % (path, got, value))
    return guard


def wscale(sock):
    """tcpi_snd_wscale and tcpi_rcv_wscale: two 4-bit fields of byte 6,
    the first declared in the low nibble on little-endian machines and in
    the high one on big-endian ones (s390x)."""
    b = bytearray(sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 104))[6]
    if sys.byteorder == "big":
        return b >> 4, b & 0x0F
    return b & 0x0F, b >> 4


def send_all(c, payload):
    try:
        c.sendall(b"k" * payload)
    except (OSError, socket.error):
        pass  # the receiver's clock decides; shutdown() below ends a blocked send


def transfer(c, s, payload, limit):
    """Sends payload client -> listener for at most limit seconds; returns
    the bytes the listener received and the ms it took."""
    c.settimeout(limit + 1)
    t = threading.Thread(target=send_all, args=(c, payload))
    t.daemon = True
    start = time.time()
    end = start + limit
    t.start()
    got = 0
    while got < payload:
        left = end - time.time()
        if left <= 0:
            break
        s.settimeout(min(left, 0.25))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        if not chunk:
            break
        got += len(chunk)
    ms = int((time.time() - start) * 1000)
    try:
        c.shutdown(socket.SHUT_RDWR)
    except (OSError, socket.error):
        pass
    t.join(0.5)
    return got, ms


def one_case(rcvbuf, payload, share):
    case_end = time.time() + share
    sent0, recv0 = netstat_cookies()
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s = None
    try:
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        ls.bind(("127.0.0.1", 0))
        ls.listen(50)
        effective = ls.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        c.settimeout(share)
        ls.settimeout(share)
        PHASE[0] = "connecting with SO_RCVBUF=%d" % rcvbuf
        c.connect(ls.getsockname())
        s, _ = ls.accept()
        c_snd, c_rcv = wscale(c)
        s_snd, s_rcv = wscale(s)
        sent1, recv1 = netstat_cookies()
        out("handshake", "rcvbuf=%d effective=%d client_snd_wscale=%d client_rcv_wscale=%d "
            "server_snd_wscale=%d server_rcv_wscale=%d cookies_sent=%d cookies_recv=%d"
            % (rcvbuf, effective, c_snd, c_rcv, s_snd, s_rcv, sent1 - sent0, recv1 - recv0))
        limit = max(min(case_end - time.time(), TRANSFER_CAP), 0.05)
        PHASE[0] = "transferring with SO_RCVBUF=%d (limit %d ms)" % (rcvbuf, int(limit * 1000))
        flowed, ms = transfer(c, s, payload, limit)
        out("transfer", "rcvbuf=%d bytes=%d flowed=%d ms=%d limit_ms=%d"
            % (rcvbuf, payload, flowed, ms, int(limit * 1000)))
    finally:
        for x in (c, s, ls):
            if x is not None:
                x.close()


def read_rmem_max(mode):
    """The host's net.core.rmem_max (the clamp of SO_RCVBUF, a global
    value). Under unshare(1) this process already is in the new namespace,
    where a 6.1 kernel shows no net.core.rmem_max at all (it is registered
    in the initial namespace only): the wrapper opened the host's as fd 4."""
    if mode != "self":
        return int(os.pread(4, 32, 0).decode("ascii", "replace").strip())
    with open("/proc/sys/net/core/rmem_max") as f:
        return int(f.read().strip())


def main():
    budget_ms, payload, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    start = time.time()
    deadline = start + budget_ms / 1000.0 - RESERVE
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(max(int(budget_ms / 1000) + 1, 1))  # the hard limit if anything blocks
    out("python", "%d.%d.%d %s" % (sys.version_info[0], sys.version_info[1], sys.version_info[2], sys.executable))
    rmem_max = read_rmem_max(mode)
    out("rmem_max", rmem_max)
    PHASE[0] = "entering the network namespace"
    guard = enter_netns(mode)
    cases = sys.argv[4:]
    for i, arg in enumerate(cases):
        rcvbuf = rmem_max if arg == "max" else int(arg)
        # Each case gets an equal share of what is left: a transfer that
        # stalls (the bug's own effect) cannot eat the next cases' time.
        share = (deadline - time.time()) / (len(cases) - i)
        if share < 0.05:
            stop("timeout", "probe budget of %d ms spent before the case SO_RCVBUF=%d (%d of %d cases measured)"
                 % (budget_ms, rcvbuf, i, len(cases)))
        try:
            one_case(rcvbuf, payload, share)
        except (OSError, socket.error) as e:
            stop("error", "case SO_RCVBUF=%d: %s" % (rcvbuf, e))
        guard.check("during the case SO_RCVBUF=%d" % rcvbuf)
    PHASE[0] = "finishing"
    out("host_syncookies_during", read_ns_value(guard.fd))
    out("elapsed_ms", int((time.time() - start) * 1000))
    stop("ok")


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except Exception as e:  # report, never a traceback on stdout
        stop("error", "%s: %s" % (type(e).__name__, e))
