# kaudit SYN-cookie window-scale probe (Linux commit 909172a).
#
# Runs as root, started by kaudit's probe wrapper (probe.sh) with the
# host's own python3 (or RHEL 8's platform-python). It never writes a file
# and never changes a value of the host's network namespace:
#   1. opens the HOST namespace's tcp_syncookies (kept open to re-check it),
#   2. unshare(CLONE_NEWNET): from here on this process lives in a fresh,
#      anonymous network namespace that disappears when the process exits,
#   3. brings up lo and sets tcp_syncookies=2 (cookies for every SYN),
#      tcp_timestamps=1 and tcp_window_scaling=1 INSIDE that namespace,
#   4. per SO_RCVBUF case: a listener with SO_RCVBUF set before listen() (as
#      Kafka does), a loopback client, raw TCP_INFO on both ends, a payload
#      sent client -> listener,
#   5. after every write and every case re-reads the host's value through
#      the descriptor opened in step 1; a change aborts and restores it.
# Output: key=value lines (the wrapper frames them); nothing else on stdout.
# Arguments: BUDGET_MS PAYLOAD_BYTES RCVBUF... (RCVBUF "max" = rmem_max).
import ctypes
import errno
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


def out(key, value):
    sys.stdout.write("%s=%s\n" % (key, value))
    sys.stdout.flush()


def stop(state, reason):
    out("state", state)
    out("reason", reason.replace("\n", " "))
    sys.exit(0)


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

    def __init__(self):
        self.fd = os.open(SYSCTL + "tcp_syncookies", os.O_RDWR)
        self.before = read_ns_value(self.fd)

    def check(self, when):
        now = read_ns_value(self.fd)
        if now != self.before:
            os.pwrite(self.fd, (self.before + "\n").encode(), 0)
            out("host_syncookies_changed", now)
            stop("host-changed", "the host namespace's tcp_syncookies changed from %s to %s %s: "
                 "it is not per network namespace on this kernel; restored to %s, probe aborted"
                 % (self.before, now, when, read_ns_value(self.fd)))


def enter_netns(guard):
    before = os.readlink("/proc/self/ns/net")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        stop("unshare-failed", "unshare(CLONE_NEWNET): %s" % os.strerror(e))
    after = os.readlink("/proc/self/ns/net")
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


def wscale(sock):
    info = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 104)
    b = bytearray(info)[6]
    return b & 0x0F, b >> 4  # tcpi_snd_wscale, tcpi_rcv_wscale


def receive(conn, want, got):
    n = 0
    while n < want:
        chunk = conn.recv(65536)
        if not chunk:
            break
        n += len(chunk)
    got.append(n)


def one_case(rcvbuf, payload, deadline):
    sent0, recv0 = netstat_cookies()
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    ls.bind(("127.0.0.1", 0))
    ls.listen(50)
    effective = ls.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    left = max(deadline - time.time(), 0.1)
    c.settimeout(left)
    ls.settimeout(left)
    c.connect(ls.getsockname())
    s, _ = ls.accept()
    s.settimeout(left)
    c_snd, c_rcv = wscale(c)
    s_snd, s_rcv = wscale(s)
    got = []
    t = threading.Thread(target=receive, args=(s, payload, got))
    t.daemon = True
    start = time.time()
    t.start()
    c.sendall(b"k" * payload)
    t.join(max(deadline - time.time(), 0.1))
    ms = int((time.time() - start) * 1000)
    sent1, recv1 = netstat_cookies()
    flowed = got[0] if got else 0
    for x in (c, s, ls):
        x.close()
    out("case", "rcvbuf=%d effective=%d client_snd_wscale=%d client_rcv_wscale=%d "
        "server_snd_wscale=%d server_rcv_wscale=%d cookies_sent=%d cookies_recv=%d "
        "bytes=%d flowed=%d ms=%d" % (rcvbuf, effective, c_snd, c_rcv, s_snd, s_rcv,
                                      sent1 - sent0, recv1 - recv0, payload, flowed, ms))


def main():
    budget_ms, payload = int(sys.argv[1]), int(sys.argv[2])
    start = time.time()
    deadline = start + budget_ms / 1000.0
    signal.alarm(max(int(budget_ms / 1000) + 1, 1))  # SIGALRM kills us if anything blocks
    out("python", "%d.%d.%d %s" % (sys.version_info[0], sys.version_info[1], sys.version_info[2], sys.executable))
    with open("/proc/sys/net/core/rmem_max") as f:
        rmem_max = int(f.read().strip())
    out("rmem_max", rmem_max)
    guard = Guard()
    out("host_syncookies_before", guard.before)
    enter_netns(guard)
    for arg in sys.argv[3:]:
        rcvbuf = rmem_max if arg == "max" else int(arg)
        if time.time() > deadline:
            stop("timeout", "probe budget of %d ms spent before the case SO_RCVBUF=%d" % (budget_ms, rcvbuf))
        try:
            one_case(rcvbuf, payload, deadline)
        except (OSError, socket.error) as e:
            stop("error", "case SO_RCVBUF=%d: %s" % (rcvbuf, e))
        guard.check("during the case SO_RCVBUF=%d" % rcvbuf)
    out("host_syncookies_during", read_ns_value(guard.fd))
    out("elapsed_ms", int((time.time() - start) * 1000))
    out("state", "ok")


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except Exception as e:  # report, never a traceback on stdout
        out("state", "error")
        out("reason", ("%s: %s" % (type(e).__name__, e)).replace("\n", " "))
